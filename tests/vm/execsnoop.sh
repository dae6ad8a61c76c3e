# tests/vm/execsnoop.sh: execsnoop on kernels that have kprobes, where the
# arguments come from kprobes on __x64_sys_execve(at) (the argument vector
# behind a struct pt_regs, read from user memory; before 4.17 on
# SyS_execve, the arguments in registers), and, kprobes forced off,
# from eprobes on syscalls:sys_enter_execve(at) where the kernel has them;
# the build machines' kernel only has the uprobe path
# (tests/runtime/execsnoop_test).
# The truth: after its "go", the execs workload starts N children that exec
# it through the C library (execv, execvp after a failed PATH try,
# posix_spawn) and M that make the execve system call themselves, each with
# the arguments
#   execs child "hello world" <200 digits> end
# and waits for each. The kernel-side paths see all N + M with their
# arguments, each with the workload as its parent.
# vm-static: only: kprobe_path_exact without_kprobes
# vm-old: also: same_execs_as_perf_tools

N=23
M=5

# (first_function: lib.sh)

long_arg() {
  local i=0 s=
  while [ $i -lt 20 ]; do s="${s}0123456789"; i=$((i + 1)); done
  echo "$s"
}
ARGS="execs child hello world $(long_arg) end"

# check_execs OUT WANT ARGS [TIMES]: OUT has exactly WANT rows whose PPID
# is the workload's, each with arguments ARGS, each a different PID; with
# TIMES the rows start with a time column.
check_execs() {
  local out=$1 skip=0 rows good pids
  [ -n "${4:-}" ] && skip=1
  rows=$(awk -v p="$WL_PID" -v s=$skip '$(2 + s) == p' "$out" | wc -l)
  good=$(awk -v p="$WL_PID" -v s=$skip -v a="$3" '
    $(2 + s) == p { line = $0; sub(/^ *[^ ]+ +[^ ]+ +/, "", line);
                    if (s) sub(/^[^ ]+ +/, "", line); if (line == a) n++ }
    END { print n + 0 }' "$out")
  pids=$(awk -v p="$WL_PID" -v s=$skip '$(2 + s) == p { print $(1 + s) }' "$out" | sort -u | wc -l)
  [ "$rows" -eq "$2" ] && [ "$good" -eq "$2" ] && [ "$pids" -eq "$2" ] ||
    { head -n 20 "$out"; fail "$rows rows with PPID $WL_PID ($good with '$3', $pids PIDs), expected $2"; }
}

# The kprobe path, exact: every exec, with libc or without, with its
# arguments and parent.
case_kprobe_path_exact() {
  start_workload execs $N $M
  traced_run /tmp/es.out execsnoop
  local entry
  entry=$(first_function __x64_sys_execve SyS_execve sys_execve)
  has /tmp/es.out.err "^execsnoop: arguments from kprobes on $entry" "the kprobe path"
  has /tmp/es.out '^Tracing exec\(\)s\. Ctrl-C to end\.$' "perf-tools' header"
  has /tmp/es.out '^   PID   PPID ARGS$' "the column header"
  check_execs /tmp/es.out $((N + M)) "$ARGS"
}

# Arguments that are string constants of the program, which a forked child
# has not mapped yet: the kprobes at the system call cannot read them (they
# do not fault pages in), the uprobes on libc's exec functions that
# execsnoop adds to them can. The children that exec without libc are seen
# without arguments ("[proc]" or "[?]").
case_kprobe_string_constants() {
  skip_in_static_image "libc's exec functions are not in a static workload"
  start_workload execs $N $M literals
  traced_run /tmp/es.out execsnoop
  has /tmp/es.out.err "^execsnoop: arguments from kprobes on $(first_function __x64_sys_execve SyS_execve sys_execve).*, with uprobes on " \
    "the uprobes added to the kprobes"
  local good marked
  good=$(awk -v p="$WL_PID" -v a="$ARGS" '$2 == p { l = $0; sub(/^ *[^ ]+ +[^ ]+ +/, "", l); if (l == a) n++ }
    END { print n + 0 }' /tmp/es.out)
  marked=$(awk -v p="$WL_PID" '$2 == p && ($NF == "[proc]" || $NF == "[?]")' /tmp/es.out | wc -l)
  [ "$good" -eq $N ] && [ "$marked" -eq $M ] ||
    { head -n 40 /tmp/es.out; fail "$good execs with their arguments (expected $N), $marked marked (expected $M)"; }
}

# -a 3 and -t: three arguments then [...], a time column.
case_kprobe_max_args_and_times() {
  start_workload execs $N $M
  traced_run /tmp/es.out execsnoop -t -a 3
  has /tmp/es.out '^TIMEs +PID +PPID ARGS$' "the -t column header"
  check_execs /tmp/es.out $((N + M)) "execs child hello world [...]" times
}

# -r: each child's two execs; without it, the first.
case_kprobe_reexecs() {
  start_workload execs $N 0 reexec
  traced_run /tmp/es.out execsnoop
  check_execs /tmp/es.out $N "execs reexec again"
  start_workload execs $N 0 reexec
  traced_run /tmp/es.out execsnoop -r
  local first second
  first=$(awk -v p="$WL_PID" '$2 == p && $3 == "execs" && $4 == "reexec"' /tmp/es.out | wc -l)
  second=$(awk -v p="$WL_PID" '$2 == p && $3 == "execs" && $4 == "child"' /tmp/es.out | wc -l)
  [ "$first" -eq $N ] && [ "$second" -eq $N ] ||
    { head -n 20 /tmp/es.out; fail "-r: $first first execs and $second second, expected $N each"; }
}

# Buffered (-d) with the name filter: the same truth, read once at the end.
case_kprobe_buffered_by_name() {
  start_workload execs $N $M
  buffered_run /tmp/es.out execsnoop -d 6 '^execs$'
  has /tmp/es.out '^Tracing exec\(\)s issued by process name "\^execs\$" for 6 seconds \(buffered\)\.\.\.$' "the header"
  check_execs /tmp/es.out $((N + M)) "$ARGS"
}

# kprobes forced off: eprobes on syscalls:sys_enter_execve where the kernel
# has them (the raw execs too), else uprobes on libc's exec functions
# (which a static workload does not call: that half needs the dynamic
# image; the raw execs are then seen without their arguments).
case_without_kprobes() {
  start_workload execs $N $M
  if tracekit features | grep -Eq '^eprobes +yes'; then
    traced_run /tmp/es.out env TRACEKIT_KERNEL_FEATURES=-kprobes execsnoop
    has /tmp/es.out.err '^execsnoop: arguments from eprobes on syscalls:sys_enter_execve' \
      "the eprobe path"
    check_execs /tmp/es.out $((N + M)) "$ARGS"
  else
    skip_in_static_image "no eprobes in this kernel, and libc's exec functions are not in a static workload"
    traced_run /tmp/es.out env TRACEKIT_KERNEL_FEATURES=-kprobes execsnoop
    has /tmp/es.out.err '^execsnoop: arguments from uprobes on ' "the uprobe path"
    local good
    good=$(awk -v p="$WL_PID" '$2 == p && $3 == "execs" && $4 == "child"' /tmp/es.out | wc -l)
    [ "$good" -ge $N ] || { head -n 20 /tmp/es.out; fail "$good execs with arguments, expected $N at least"; }
  fi
}

# perf-tools' execsnoop on the same workload: it puts a kprobe on
# sys_execve, stub_execve or do_execve and reads argv from %si; since 4.17
# the syscall's arguments are behind a pt_regs there. On 6.1 and 5.10 none
# of the three can be probed at all ("ERROR: adding a kprobe for execve.
# Exiting.", seen with scripts/vm-run): its lines are compared where it
# traces, and ours must have every exec with its arguments either way.
case_same_execs_as_perf_tools() {
  skip_in_static_image "perf-tools' execsnoop is a bash script, and the static image has no libc for bash"
  [ -x /usr/sbin/execsnoop-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/execsnoop-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  mkdir -p /sys/kernel/debug
  mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null && defer "umount /sys/kernel/debug"
  start_workload execs $N $M
  rm -f /tmp/theirs.out /tmp/theirs.err
  /bin/bash /usr/sbin/execsnoop-perf > /tmp/theirs.out 2> /tmp/theirs.err &
  local theirs=$!
  defer "kill -INT $theirs 2>/dev/null; wait $theirs 2>/dev/null"
  local i=0
  while ! grep -q 'PPID ARGS' /tmp/theirs.out 2>/dev/null; do
    i=$((i + 1))
    if ! kill -0 $theirs 2>/dev/null || [ $i -gt 300 ]; then
      echo "perf-tools' execsnoop did not trace: $(cat /tmp/theirs.err)"
      break
    fi
    sleep 0.1
  done
  if grep -q 'PPID ARGS' /tmp/theirs.out; then
    local cat
    cat=$(child_running "$theirs" "cat -v trace_pipe ") ||
      fail "perf-tools' execsnoop never read trace_pipe: $(cat /tmp/theirs.err)"
    kill -USR1 "$WL_PID"
    wait_for "$WL_OUT" '^done$'
    sleep 1
    # SIGTERM to its cat: started in the background by a shell, the script
    # and its cat ignore SIGINT (a SIGINT left it running on 4.4, where
    # its probes still work); the script then ends as after a Ctrl-C.
    kill -TERM "$cat"
    wait $theirs
    echo "perf-tools' lines for the workload's children:"
    awk -v p="$WL_PID" '$2 == p' /tmp/theirs.out | head -n 5
    echo "perf-tools: $(awk -v p="$WL_PID" -v a="$ARGS" '$2 == p && index($0, a)' /tmp/theirs.out | wc -l) of $((N + M)) execs with their arguments"
    start_workload execs $N $M
  fi
  traced_run /tmp/es.out execsnoop
  check_execs /tmp/es.out $((N + M)) "$ARGS"
}
