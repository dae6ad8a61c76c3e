# tests/vm/funccount.sh: funccount on each of its ways of counting. The
# truth: the reads workload makes exactly N read(2) calls after its go, each
# of which calls vfs_read() once, all from do_reads(), called once.
# Neither guest kernel has the function profiler (CONFIG_FUNCTION_PROFILER
# is off in Debian's kernels): its case checks the kernel's answer either
# way; the unit tests drive it on a fake tracefs.
# vm-static: only: funccount_kprobe_counters_exact funccount_function_tracer_exact funccount_tracepoint_and_uprobe

N=97

# The count of NAME in funccount's output FILE (its last table).
count_of() { awk -v n="$2" '$1 == n { c = $2 } END { print c + 0 }' "$1"; }

expect_count() {
  local got
  got=$(count_of "$1" "$2")
  [ "$got" -eq "$3" ] || { cat "$1"; fail "$2 counted $got times, expected $3"; }
}

# Perf counters on kprobes (the profiler forced off, as on these kernels).
case_funccount_kprobe_counters_exact() {
  export TRACEKIT_KERNEL_FEATURES="${TRACEKIT_KERNEL_FEATURES:+$TRACEKIT_KERNEL_FEATURES,}-function_profiler"
  start_workload reads $N
  buffered_run /tmp/fc.out funccount -d 2 -p "$WL_PID" 'vfs_rea*'
  # -p is bcc's: bcc's header, table and end line.
  has /tmp/fc.out '^Tracing [0-9]* functions for "vfs_rea\*"\.\.\. Hit Ctrl-C to end\.$' "the header"
  has /tmp/fc.out '^FUNC {36}COUNT$' "the table's header"
  expect_count /tmp/fc.out vfs_read $N
  has /tmp/fc.out '^Detaching\.\.\.$' "the end line"
}

# The function tracer counted by address (kprobes forced off too).
case_funccount_function_tracer_exact() {
  export TRACEKIT_KERNEL_FEATURES="${TRACEKIT_KERNEL_FEATURES:+$TRACEKIT_KERNEL_FEATURES,}-function_profiler,-kprobes"
  start_workload reads $N
  buffered_run /tmp/fc.out funccount -d 2 -p "$WL_PID" 'vfs_rea*'
  expect_count /tmp/fc.out vfs_read $N
}

# The profiler where the kernel has it (then without -p, which it cannot
# do: every process's calls, N of them ours at least); where it has not,
# the same run counts with kprobes.
case_funccount_profiler_or_not() {
  start_workload reads $N
  rm -f /tmp/fc.out
  funccount -d 3 vfs_read > /tmp/fc.out 2> /tmp/fc.out.err &
  local tool=$! profiling
  defer "kill $tool 2>/dev/null"
  wait_for /tmp/fc.out '^Tracing '
  profiling=$(cat $T/function_profile_enabled 2>/dev/null)
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  wait "$tool" || fail "funccount exited with $?: $(cat /tmp/fc.out.err)"
  if kconfig CONFIG_FUNCTION_PROFILER; then
    [ "$profiling" = 1 ] || fail "the kernel has the profiler, funccount did not use it"
  else
    [ -e $T/function_profile_enabled ] && fail "function_profile_enabled without CONFIG_FUNCTION_PROFILER"
  fi
  [ "$(count_of /tmp/fc.out vfs_read)" -ge $N ] || { cat /tmp/fc.out; fail "fewer than $N vfs_read"; }
}

# -r, a regular expression; -t, the top N only; -i with -T: a table per
# second, each after the time of day. ksys_read and vfs_read are called
# once a read each (rw_verify_area is not: writes call it too): the top one
# is vfs_read (ties go by name), N times in all the tables together.
case_funccount_regex_top_intervals() {
  start_workload reads $N
  buffered_run /tmp/fc.out funccount -r -t 1 -i 1 -T -d 3 -p "$WL_PID" '^(vfs_read|ksys_read)$'
  has /tmp/fc.out '^Tracing 2 functions for "\^\(vfs_read\|ksys_read\)\$"\.\.\. Hit Ctrl-C to end\.$' "the header"
  [ "$(count /tmp/fc.out '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$')" -ge 2 ] || { cat /tmp/fc.out; fail "fewer than 2 timed tables"; }
  [ "$(count /tmp/fc.out '^ksys_read ')" -eq 0 ] || { cat /tmp/fc.out; fail "more than the top 1"; }
  [ "$(awk '$1 == "vfs_read" { s += $2 } END { print s + 0 }' /tmp/fc.out)" -eq $N ] ||
    { cat /tmp/fc.out; fail "not $N vfs_read in the tables"; }
}

# A tracepoint and a user function (uprobe), counted by perf counters.
case_funccount_tracepoint_and_uprobe() {
  start_workload reads $N
  buffered_run /tmp/fc.out funccount -d 2 -p "$WL_PID" t:syscalls:sys_enter_read
  expect_count /tmp/fc.out syscalls:sys_enter_read $N
  start_workload reads $N
  buffered_run /tmp/fu.out funccount -d 2 -p "$WL_PID" "$(command -v reads):do_reads"
  expect_count /tmp/fu.out do_reads 1
}

# No match: TOOLS.md's line on stderr, exit 1.
case_funccount_no_match() {
  rm -f /tmp/fc.out
  funccount -d 1 'tk_no_such_function_*' > /tmp/fc.out 2>/tmp/fc.err && fail "funccount exited 0"
  has /tmp/fc.err '^funccount: 0 functions matched by "tk_no_such_function_\*"\. Exiting\.$' "the line"
  [ ! -s /tmp/fc.out ] || fail "stdout: $(cat /tmp/fc.out)"
}

# -p on a process that forks all the time: counters its children inherited
# are released by a child that was exiting when funccount closed its own, a
# moment after, and the first probe removed (vfs_writev, the last closed)
# was refused as busy and left behind (3 runs of 3). Now tried again.
case_funccount_pid_forking_leaves_nothing() {
  sh -c 'while :; do /bin/true; done' &
  local wl=$! i
  defer "kill $wl 2>/dev/null"
  for i in 1 2 3; do
    funccount -d 1 -p "$wl" 'vfs_*' > /tmp/fc.out 2> /tmp/fc.err ||
      { cat /tmp/fc.err; fail "funccount failed"; }
    ! grep -q 'cannot' /tmp/fc.err || { cat /tmp/fc.err; fail "a probe was left (run $i)"; }
    ! grep -q tracekit $T/dynamic_events || { cat $T/dynamic_events; fail "probes left (run $i)"; }
  done
}
