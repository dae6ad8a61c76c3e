# tests/vm/stackcount.sh: stackcount and stacksnoop on kernel functions, on a
# kernel that has kprobes and the function tracer (the build machines' kernel
# has neither). The truth: the reads workload makes exactly 997 read(2)
# calls, each reaching vfs_read() once, after its "go".

N=997

# go_workload NAME ARGS...: starts a workload that waits for SIGUSR1 (its
# "go"), waits for its "ready" line; sets WL_PID.
go_workload() {
  local out=/tmp/wl.out i=0
  rm -f "$out"   # (see traced_run)
  "$@" > "$out" 2>&1 &
  WL_PID=$!
  defer "kill $WL_PID 2>/dev/null; wait $WL_PID 2>/dev/null"
  while ! grep -q '^ready ' "$out"; do
    i=$((i + 1)); [ $i -le 200 ] || fail "workload $1 not ready: $(cat "$out")"
    sleep 0.1
  done
}

# wait_for FILE REGEX: until a line of FILE matches (30 s at most).
wait_for() {
  local i=0
  while ! grep -Eq -- "$2" "$1" 2>/dev/null; do
    i=$((i + 1)); [ $i -le 300 ] || fail "no /$2/ in $1 after 30 s: $(tail -n 5 "$1")"
    sleep 0.1
  done
}

# traced_run OUT CMD...: runs CMD (a tracing tool) in the background, waits
# for its header, lets the workload go, waits until it is done, then stops
# the tool with SIGINT and waits for it.
traced_run() {
  local out=$1 tool
  shift
  # The file must not exist before the tool opens it: the header of an
  # earlier case's run would be taken for this one's (the shell truncates
  # the file in the child, after fork, maybe after wait_for looked).
  rm -f "$out" "$out.err"
  "$@" > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  step "started $* (pid $tool); waiting for its header"
  wait_for "$out" 'Hit Ctrl-C to end|STACK$|\(buffered\)'
  step "header seen; go to the workload"
  kill -USR1 "$WL_PID"
  wait_for /tmp/wl.out '^done$'
  step "workload done; SIGINT to the tool"
  kill -INT "$tool"
  wait "$tool" || fail "$1 exited with $?: $(tail -n 3 "$out.err")"
  step "the tool exited"
}

# The sum of stackcount's counts (lines of 4 spaces and a number).
counted() { awk '/^    [0-9]+$/ { n += $1 } END { print n + 0 }' "$1"; }

expect_count() {
  local got
  got=$(counted "$1")
  [ "$got" -eq "$2" ] || { cat "$1"; fail "counted $got events, expected $2"; }
}

# Kernel stacks from a kprobe with a stacktrace trigger, read raw.
case_kprobe_kernel_stacks_exact() {
  go_workload reads $N
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" vfs_read
  expect_count /tmp/sc.out $N
  has /tmp/sc.out '^  vfs_read$' "vfs_read as the first frame"
  has /tmp/sc.out '^  ksys_read$' "ksys_read below vfs_read"
}

# The default: kernel and user stacks from perf on the kprobe's event.
case_kprobe_user_and_kernel_stacks() {
  go_workload reads $N
  traced_run /tmp/sc.out stackcount -d -p "$WL_PID" vfs_read
  expect_count /tmp/sc.out $N
  has /tmp/sc.out '^  do_reads$' "the user function do_reads"
  has /tmp/sc.out '^    --$' "the kernel/user delimiter"
  has /tmp/sc.out '^  ksys_read$' "ksys_read"
}

# Function returns: a kretprobe.
case_kretprobe_exact() {
  go_workload reads $N
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" r::vfs_read
  expect_count /tmp/sc.out $N
}

# Without kprobes (forced), kernel functions go to the function tracer with
# func_stack_trace, in the run's own instance.
case_function_tracer_fallback_exact() {
  go_workload reads $N
  traced_run /tmp/sc.out env TRACEKIT_NO_KPROBES=1 stackcount -K -p "$WL_PID" vfs_read
  expect_count /tmp/sc.out $N
  has /tmp/sc.out '^  ksys_read$' "ksys_read in the function tracer's stacks"
}

# Globs expand against available_filter_functions.
case_glob_traces_several_functions() {
  go_workload reads 5
  traced_run /tmp/sc.out stackcount -K -p "$WL_PID" 'vfs_rea*'
  has /tmp/sc.out '^Tracing [2-9][0-9]* functions for "vfs_rea\*"' "several functions traced"
  [ "$(counted /tmp/sc.out)" -ge 5 ] || fail "fewer than 5 events: $(cat /tmp/sc.out)"
}

# stacksnoop, buffered: every call's stack, printed once at the end.
case_stacksnoop_kprobe_buffered_exact() {
  go_workload reads $N
  rm -f /tmp/ss.out /tmp/ss.err   # (see traced_run)
  stacksnoop -d 4 -p "$WL_PID" vfs_read > /tmp/ss.out 2> /tmp/ss.err &
  local tool=$!
  wait_for /tmp/ss.out '\(buffered\)'
  kill -USR1 "$WL_PID"
  wait "$tool" || fail "stacksnoop exited with $?: $(tail -n 3 /tmp/ss.err)"
  local n
  n=$(count /tmp/ss.out ' ip: [0-9a-f]+ vfs_read')
  [ "$n" -eq $N ] || fail "$n stacks with ip: vfs_read, expected $N: $(head -n 20 /tmp/ss.out)"
}

# stacksnoop live, through the function tracer.
case_stacksnoop_function_tracer_live() {
  go_workload reads 7
  traced_run /tmp/ss.out env TRACEKIT_NO_KPROBES=1 stacksnoop -v -p "$WL_PID" vfs_read
  local n
  n=$(count /tmp/ss.out ' ip: ')
  [ "$n" -eq 7 ] || fail "$n stacks, expected 7: $(head -n 30 /tmp/ss.out)"
  has /tmp/ss.out ' reads +[0-9]+ +[0-9] +ip: ' "the COMM PID CPU columns"
}
