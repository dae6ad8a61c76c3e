# tests/vm/lib.sh: helpers for the VM test cases (busybox sh, in the guest).
# tests/vm/run sources this file and then one case file before it calls a
# case function; see tests/vm/README.md.

# The tracing directory: tracefs, or debugfs's before Linux 4.1 (3.10).
T=/sys/kernel/tracing
[ -e "$T/trace" ] || [ ! -e /sys/kernel/debug/tracing/trace ] || T=/sys/kernel/debug/tracing

# fail MESSAGE: ends the case; MESSAGE is the reason the runner prints.
fail() {
  echo "reason: $*"
  exit 1
}

# defer COMMAND: runs COMMAND when the case ends, however it ends (last
# deferred first). Undo every tracefs change this way, so that a failing
# case still leaves tracefs as it found it (the runner checks).
_deferred=""
defer() {
  _deferred="$*
$_deferred"
}
_run_deferred() {
  local IFS='
'
  for _c in $_deferred; do eval "$_c" || true; done
}
trap _run_deferred EXIT

# tfs_write FILE TEXT / tfs_append FILE TEXT: write or append TEXT to a
# tracefs file (relative to $T); fail with the kernel's error_log if refused.
tfs_write() { _tfs ">" "$@"; }
tfs_append() { _tfs ">>" "$@"; }
_tfs() {
  local op=$1 f=$2
  shift 2
  if [ "$op" = ">" ]; then
    printf '%s\n' "$*" 2>/dev/null > "$T/$f"
  else
    printf '%s\n' "$*" 2>/dev/null >> "$T/$f"
  fi || fail "tracefs refused '$*' $op $f: $(tail -n 2 "$T/error_log" 2>/dev/null | tr '\n' ' ')"
}

# has FILE PATTERN [WHAT]: FILE has a line matching the extended regex
# PATTERN, or the case fails (saying WHAT is missing) after showing
# FILE's start.
has() {
  grep -Eq -- "$2" "$1" && return 0
  echo "--- $1 (first 30 lines):"
  head -n 30 "$1"
  fail "${3:+missing $3: }no line matching /$2/ in $1"
}

# skip_in_static_image REASON: in the static image (scripts/vm with
# VM_STATIC=1: no libc, so no bash and no perf-tools script) ends the case,
# counted as skipped with REASON; in the dynamic image it does nothing and
# the case runs (and fails if what it needs is missing). Cases cannot skip
# otherwise.
skip_in_static_image() {
  [ "${VM_IMAGE:-}" = static ] || return 0
  echo "skip: $*"
  exit 77
}

# skip_when_forced FEATURE REASON: in tests/vm/run's fallback pass, when
# TRACEKIT_KERNEL_FEATURES turns FEATURE off, ends the case, counted as
# skipped with REASON (what the case tests is that feature's own path).
skip_when_forced() {
  case ",${TRACEKIT_KERNEL_FEATURES:-}," in
    *",-$1,"*) shift; echo "skip: $*"; exit 77 ;;
  esac
}

# step TEXT: notes where a case is; the last steps are shown when it fails
# (a case that times out shows where it was waiting).
step() { echo "step: $*"; }

# hung_report PGID: what every process of a process group is doing: its
# command line, state, wait channel and kernel stack (the runner prints it
# for a case that timed out).
hung_report() {
  local d p n=0
  echo "processes of the case when it timed out:"
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$(cut -d' ' -f5 "$d/stat" 2>/dev/null)" = "$1" ] || continue
    n=$((n + 1))
    echo "  pid $p: $(tr '\0' ' ' < "$d/cmdline" 2>/dev/null)"
    echo "    state $(sed -n 's/^State:[[:space:]]*//p' "$d/status" 2>/dev/null)," \
         "wchan $(cat "$d/wchan" 2>/dev/null)"
    sed 's/^/      /' "$d/stack" 2>/dev/null
  done
  [ $n -gt 0 ] || echo "  none: every process of the case had ended"
}

# kconfig CONFIG_NAME: true when the guest kernel was built with it (=y or
# =m), from the kernel package's config that scripts/vm puts in
# /tracekit/run/kernel-config. A case that depends on an optional feature
# asks this, then checks the kernel's side for either answer: present and
# working, or absent and refused (never a skip).
KCONFIG=/tracekit/run/kernel-config
kconfig() {
  [ -r "$KCONFIG" ] || fail "no $KCONFIG (scripts/vm puts the kernel's config there)"
  grep -Eq "^$1=(y|m)\$" "$KCONFIG"
}

# first_function NAME...: the first NAME that available_filter_functions
# lists (the name a kprobe takes on this kernel), else the first NAME.
# System calls' entries: __x64_sys_NAME since 4.17, before it sys_NAME,
# listed by its alias SyS_NAME (3.10 to 4.16).
first_function() {
  local f
  for f in "$@"; do
    grep -qx -- "$f" "$T/available_filter_functions" && { echo "$f"; return; }
  done
  echo "$1"
}

# vfs_read's caller for read(2): ksys_read since 4.17, before it sys_read,
# which available_filter_functions lists by its alias SyS_read.
read_caller() { first_function ksys_read SyS_read sys_read; }

# Whether the kernel unwinds with ORC (CONFIG_UNWINDER_ORC, 4.14+): its
# stacks at a kprobe at a function's entry start at the function, then its
# caller. Frame-pointer unwinders (CONFIG_FRAME_POINTER alone: 3.10, 4.4)
# walk the saved frame pointers only, and at a function's first instruction
# the newest is its caller's: the caller is missing (the kernel's own
# stacktrace option shows the same), the system call entry code is there.
orc_unwinder() { kconfig CONFIG_UNWINDER_ORC; }
SYSCALL_ENTRY='(entry_SYSCALL_64[a-z_]*|system_call[a-z_]*)'

# count FILE PATTERN: how many lines of FILE match the extended regex.
count() { grep -Ec -- "$2" "$1"; }

# expect_lines FILE PATTERN N: exactly N lines of FILE match the extended
# regex PATTERN, or the case fails, showing FILE (all of it up to 500 lines,
# else its first and last 40) and the start of FILE.err (a tool's stderr,
# traced_run's) to tell a rare miscount by.
expect_lines() {
  local got
  got=$(count "$1" "$2")
  [ "$got" -eq "$3" ] && return
  if [ "$(wc -l < "$1")" -le 500 ]; then
    cat "$1"
  else
    head -n 40 "$1"
    echo "[...]"
    tail -n 40 "$1"
  fi
  [ -s "$1.err" ] && { echo "stderr:"; head -n 20 "$1.err"; }
  fail "$got lines match /$2/, expected $3"
}

# start_workload NAME [ARGS...]: starts build/workloads/NAME in the
# background and waits (up to 20 s) for its "ready PID" line; sets WL_PID,
# and WL_OUT (its output file). The workload is killed when the case ends.
start_workload() {
  local out=/tmp/workload.$$.$1 i=0
  # A fresh file: an earlier workload's "ready" line must not be read as
  # this one's (the shell opens the file in the child, after fork).
  rm -f "$out"
  "$@" > "$out" 2>&1 &
  WL_PID=$!
  WL_OUT=$out
  defer "kill $WL_PID 2>/dev/null; wait $WL_PID 2>/dev/null"
  while ! grep -q '^ready ' "$out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -le 200 ] || fail "workload $1 printed no 'ready' line in 20 s: $(cat "$out")"
    kill -0 "$WL_PID" 2>/dev/null || fail "workload $1 exited early: $(cat "$out")"
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
# for its header, lets the workload of start_workload go (SIGUSR1), waits
# until it is done, then stops the tool with SIGINT and waits for it.
traced_run() { _workload_run interrupt "$@"; }

# buffered_run OUT CMD...: the same for a tool with -d SECS (which reads the
# kernel's buffer once at the end), which is left to end by itself.
buffered_run() { _workload_run wait "$@"; }

_workload_run() {
  local how=$1 out=$2 tool
  shift 2
  # The file must not exist before the tool opens it: the header of an
  # earlier case's run would be taken for this one's (the shell truncates
  # the file in the child, after fork, maybe after wait_for looked).
  rm -f "$out" "$out.err"
  "$@" > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  step "started $* (pid $tool); waiting for its header"
  if [ "$how" = interrupt ]; then
    wait_for "$out" 'Ctrl-C to end|STACK$|\(buffered\)'
  else
    wait_for "$out" '^Tracing '
  fi
  step "header seen; go to the workload"
  local t0 t1 x
  read -r t0 x < /proc/uptime
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  read -r t1 x < /proc/uptime
  if [ "$how" = interrupt ]; then
    step "workload done after $t0-$t1 s of uptime; SIGINT to the tool"
    kill -INT "$tool"
  else
    # A tool run for a fixed time (-d) that ended before the workload was
    # done saw only part of it: the steps say so if a count then fails.
    # (Exited, it is a zombie or already reaped by the shell.)
    local state=Z
    read -r x x state x 2>/dev/null < "/proc/$tool/stat"
    [ "$state" != Z ] ||
      step "the tool's time ran out before the workload's done was seen: its window may be too short"
    step "workload done after $t0-$t1 s of uptime; waiting for the tool's end"
  fi
  wait "$tool" || fail "$1 exited with $?: $(tail -n 3 "$out.err")"
  step "the tool exited"
}

# child_running PARENT CMDLINE: waits (30 s at most) until a child of PARENT,
# or a child of its child (the subshell of a pipeline: "( cat trace_pipe )
# | awk"), runs CMDLINE (its arguments joined by spaces, with a trailing
# space: "cat trace_pipe "), and prints its PID: perf-tools' scripts trace
# once their cat (or sleep) runs.
# The scan reads with the shell's own read and starts a process (tr) only
# for a process of the right name: a scan that forks per process takes
# seconds in the emulated guest under load, and missed funcgraph-perf's
# "sleep 3" (the case then waited past its time limit).
child_running() {
  local d comm ppid gppid x want=${2%% *} t0 t1
  read -r t0 x < /proc/uptime
  while :; do
    for d in /proc/[0-9]*; do
      read -r comm 2>/dev/null < "$d/comm" || continue
      [ "$comm" = "$want" ] || continue
      read -r x x x ppid x 2>/dev/null < "$d/stat" || continue
      if [ "$ppid" != "$1" ]; then
        read -r x x x gppid x 2>/dev/null < "/proc/$ppid/stat" || continue
        [ "$gppid" = "$1" ] || continue
      fi
      [ "$(tr '\0' ' ' 2>/dev/null < "$d/cmdline")" = "$2" ] || continue
      echo "${d#/proc/}"
      return 0
    done
    read -r t1 x < /proc/uptime
    [ "${t1%.*}" -lt $((${t0%.*} + 30)) ] || fail "PID $1 never ran '$2' (30 s)"
    sleep 0.05
  done
}

# The runner compares this before and after every case: a case (or a tool)
# that leaves tracefs changed fails.
tracefs_state() {
  (
    cd "$T" || exit 0
    for f in current_tracer tracing_on buffer_size_kb trace_options set_event \
             kprobe_events uprobe_events dynamic_events synthetic_events \
             set_ftrace_filter set_ftrace_notrace set_graph_function \
             set_graph_notrace set_ftrace_pid set_event_pid tracing_thresh \
             max_graph_depth function_profile_enabled; do
      [ -e "$f" ] || continue
      cat "$f" 2>&1 | grep -v '^#### all functions enabled ####$' | sed "s|^|$f: |"
    done
    # Tracer options (funcgraph-*, sleep-time, ...): trace_options lists
    # only the current tracer's, options/ has every tracer's.
    # (Less nop's own test options: Linux 3.10 makes options/test_nop_*
    # the first time current_tracer goes back to nop, and nothing removes
    # them; they are no tool's.)
    grep -H . options/* 2>/dev/null | grep -v '^options/test_nop_'
    ls instances | sed 's/^/instances: /'
  )
}

# The event filters and triggers at the top level: apart from tracefs_state
# because reading some 3000 files takes the guest about 0.6 s; the runner
# compares them after each case file, not after each case.
tracefs_filters() {
  (
    cd "$T" || exit 0
    grep -H -v -e '^none$' -e '^#' events/*/*/filter events/*/*/trigger 2>/dev/null
  )
}
