# tests/vm/functrace.sh: functrace, the function tracer on set_ftrace_filter.
# The truth: the reads workload makes exactly N read(2) calls after its go,
# each of which calls vfs_read() once.
# vm-static: only: functrace_pid_exact functrace_buffered
# vm-old: also: functrace_same_as_perf_tools

N=97

# -p: exactly N "vfs_read <-ksys_read" lines, as the kernel prints them.
# (The task's name is "<...>" until the kernel has saved it, at the task's
# next context switch while tracing: the first lines of a run may have it.
# Seen once, in the first case after a boot.)
case_functrace_pid_exact() {
  start_workload reads $N
  traced_run /tmp/ft.out functrace -p "$WL_PID" vfs_read
  has /tmp/ft.out '^Tracing "vfs_read" for PID [0-9]+\.\.\. Ctrl-C to end\.$' "the header"
  expect_lines /tmp/ft.out "^ +(reads|<\.\.\.>)-$WL_PID +\[[0-9]+\] [^ ]+ +[0-9.]+: vfs_read <-" $N
  has /tmp/ft.out '^Ending tracing\.\.\.$' "the end line"
  [ "$(count /tmp/ft.out '^#')" -eq 0 ] || fail "header lines without -H"
}

# -L TID with -H: the kernel's header of the function tracer, then the lines.
case_functrace_tid_with_headers() {
  start_workload reads $N
  traced_run /tmp/ft.out functrace -H -L "$WL_PID" 'vfs_rea*'
  has /tmp/ft.out '^Tracing "vfs_rea\*" for TID [0-9]+\.\.\. Ctrl-C to end\.$' "the header"
  has /tmp/ft.out '^# tracer: function$' "the trace file's header"
  has /tmp/ft.out '^#+.*TASK-PID' "the column header"
  expect_lines /tmp/ft.out ": vfs_read <-" $N
}

# -d: buffered, read once at the end; a glob; exactly N again.
case_functrace_buffered() {
  start_workload reads $N
  buffered_run /tmp/ft.out functrace -d 2 -p "$WL_PID" 'vfs_r*'
  has /tmp/ft.out '^Tracing "vfs_r\*" for PID [0-9]+ for 2 seconds\.\.\.$' "the header"
  expect_lines /tmp/ft.out ": vfs_read <-" $N
}

# perf-tools' functrace on one run of the workload, ours on another (both
# buffered, -d: ours may need the top level, where perf-tools' lock admits
# one at a time: -p in an instance needs its own set_ftrace_pid, Linux
# 4.6): the same N calls, the same text after the timestamp.
case_functrace_same_as_perf_tools() {
  skip_in_static_image "perf-tools' functrace is a bash script, and the static image has no libc for bash"
  [ -x /usr/sbin/functrace-perf ] && [ -x /bin/bash ] ||
    fail "no /usr/sbin/functrace-perf or /bin/bash in the image (perf-tools-unstable installed?)"
  [ -e /var/tmp/.ftrace-lock ] && fail "perf-tools' lock is held: $(cat /var/tmp/.ftrace-lock)"
  start_workload reads $N
  local theirs f
  rm -f /tmp/theirs.out
  /usr/sbin/functrace-perf -p "$WL_PID" -d 3 vfs_read > /tmp/theirs.out 2> /tmp/theirs.err &
  theirs=$!
  defer "kill $theirs 2>/dev/null"
  step "waiting for functrace-perf's sleep"
  child_running "$theirs" "sleep 3 " > /dev/null || fail "functrace-perf never slept: $(cat /tmp/theirs.err)"
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  wait "$theirs" || fail "functrace-perf exited with $?: $(cat /tmp/theirs.err)"
  start_workload reads $N
  buffered_run /tmp/ours.out functrace -p "$WL_PID" -d 3 vfs_read
  for f in theirs ours; do
    expect_lines /tmp/$f.out ": vfs_read <-" $N
    sed -n 's/.*: \(vfs_read <-.*\)/\1/p' /tmp/$f.out | sort > /tmp/$f.text
  done
  cmp -s /tmp/ours.text /tmp/theirs.text ||
    fail "different text: $(diff /tmp/ours.text /tmp/theirs.text | head -n 5)"
  echo "side by side (perf-tools' | ours):"
  grep ': vfs_read <-' /tmp/theirs.out | head -n 6 > /tmp/theirs.head
  grep ': vfs_read <-' /tmp/ours.out | head -n 6 > /tmp/ours.head
  paste -d '#' /tmp/theirs.head /tmp/ours.head | sed 's/#/   #   /'
}

# A function no kernel has: the kernel's refusal, said plainly, exit 1.
case_functrace_no_such_function() {
  rm -f /tmp/ft.out
  functrace tk_no_such_function_x > /tmp/ft.out 2>&1 && fail "functrace exited 0"
  has /tmp/ft.out '^functrace: no traceable kernel function matches "tk_no_such_function_x"' "the error"
}

# A reader that has gone (| head) ends the run, and tracefs is left as it
# was (the runner checks).
case_functrace_closed_stdout_ends_the_run() {
  start_workload reads 997
  rm -f /tmp/ft.out /tmp/ft.err
  (functrace -p "$WL_PID" vfs_read 2> /tmp/ft.err; echo "exit $?" >> /tmp/ft.err) | head -n 3 > /tmp/ft.out &
  local pipeline=$!
  defer "kill $pipeline 2>/dev/null"
  # (head's output is not written until it ends: wait for the tracer on, in
  # functrace's instance, or at the top level without instances.)
  step "waiting for the function tracer in functrace's instance"
  local i=0 d
  d=$(ls -d $T/instances/tracekit_* 2>/dev/null | head -n 1)
  until d=${d:-$(ls -d $T/instances/tracekit_* 2>/dev/null | head -n 1)}
        [ "$(cat ${d:-$T}/current_tracer 2>/dev/null)" = function ] &&
        [ "$(cat ${d:-$T}/tracing_on 2>/dev/null)" = 1 ]; do
    i=$((i + 1)); [ $i -le 300 ] || fail "functrace never started: $(cat /tmp/ft.err)"
    sleep 0.1
  done
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  step "waiting for functrace to see its reader gone"
  wait_for /tmp/ft.err '^exit '
  wait "$pipeline"
  has /tmp/ft.out '^Tracing "vfs_read" for PID' "the header"
  expect_lines /tmp/ft.out ': vfs_read <-' 2
  has /tmp/ft.err '^exit 0$' "exit status 0"
}
