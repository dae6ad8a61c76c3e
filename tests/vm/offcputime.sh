# tests/vm/offcputime.sh: offcputime (sched:sched_switch perf samples) on
# the guest kernel, whichever path it takes there: switch records and
# CLOCK_MONOTONIC (4.3+, 4.1+), or every switch sampled on each CPU and
# perf's own clock (3.10). The truth: the sleeps workload makes 7
# nanosleeps of 20 ms from main, and prints each call's wall time; its
# time off CPU under do_nanosleep is at least 7 x 20 ms and at most the
# calls' total wall time.

# run_offcpu OUT ARGS...: offcputime -f ARGS (an argument PID: the
# workload's) for 6 s over the workload's sleeps; sets WALL (the calls'
# total wall time, us).
run_offcpu() {
  local out=$1 tool a
  shift
  start_workload sleeps 7 20
  for a in "$@"; do
    [ "$a" = PID ] && a=$WL_PID
    set -- "$@" "$a"
    shift
  done
  rm -f "$out" "$out.err"
  offcputime -f "$@" 6 > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  sleep 2
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  wait "$tool" || fail "offcputime exited with $?: $(tail -n 3 "$out.err")"
  WALL=$(awk '$1 == "slept" { for (i = 2; i <= NF; i++) s += $i } END { print s + 0 }' "$WL_OUT")
}

# check_sleeps OUT: the sleeps' lines (user stack from glibc's start to
# main, kernel do_nanosleep) add up to between 133 ms and the calls' wall
# time. (Not 140: each sleep's timer is armed before the task switches
# out, so its time off CPU may fall short of 20 ms by that gap: 139665 us
# for the seven once on 6.1 under TCG; 1 ms each at most is allowed.) The whole user stack: where the kernel's syscall fast path does not
# save the user frame pointer (before 4.16), offcputime puts system calls on
# the slow path (perf/syscall_regs.hpp); without that 4.4 gave
# "[unknown];main".
check_sleeps() {
  local got
  got=$(awk '/^sleeps;(__libc_start_call_main|__libc_start_main);main;.*do_nanosleep/ { s += $NF } END { print s + 0 }' "$1")
  echo "off CPU in nanosleep: $got us, wall $WALL us"
  [ "$got" -ge 133000 ] && [ "$got" -le "$WALL" ] ||
    { head -n 20 "$1"; fail "$got us off CPU under main and do_nanosleep, expected 133000..$WALL"; }
}

# -p: the process's threads only (per-thread events with switch records,
# or every switch filtered by pid where there are none).
case_offcputime_pid_exact() {
  run_offcpu /tmp/oc.out -p PID
  check_sleeps /tmp/oc.out
  if grep -v '^sleeps;' /tmp/oc.out | grep -q .; then
    fail "-p $WL_PID showed other processes: $(grep -v '^sleeps;' /tmp/oc.out | head -n 3)"
  fi
}

# System-wide: every switch (chained switch records where the kernel has
# them).
case_offcputime_system_wide() {
  run_offcpu /tmp/oc.out
  check_sleeps /tmp/oc.out
}
