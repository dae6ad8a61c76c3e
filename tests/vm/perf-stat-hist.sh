# tests/vm/perf-stat-hist.sh: perf-stat-hist on the guests' kernels. The
# truth: the reads workload ("reads 1000 100") makes 1000 read(2) calls
# after its go, the i-th asking for i % 100 + 1 bytes: ten of each size from
# 1 to 100, each one syscalls:sys_enter_read event with that count.
# vm-static: only: perf_stat_hist_pid_exact perf_stat_hist_name

# The counts of perf-stat-hist's histogram rows in FILE, in order, on one
# line ("0 10 20 ").
counts() { awk -F': ' '/ -> / { split($2, a, " "); printf "%s ", a[1] }' "$1"; }

expect_counts() {
  local got
  got=$(counts "$1")
  [ "$got" = "$2" ] || { cat "$1"; fail "counted '$got', expected '$2'"; }
}

# One process's counters (-p: per thread, not per CPU), power-of-2 buckets.
case_perf_stat_hist_pid_exact() {
  start_workload reads 1000 100
  buffered_run /tmp/psh.out perf-stat-hist -P 2 -m 128 -p "$WL_PID" syscalls:sys_enter_read count 3
  has /tmp/psh.out "^Tracing syscalls:sys_enter_read issued by PID $WL_PID, power-of-2, max 128, for 3 seconds\.\.\.\$" "the header"
  has /tmp/psh.out '^            Range          : Count    Distribution$' "the histogram's header"
  expect_counts /tmp/psh.out "0 0 10 20 40 80 160 320 370 0 "
}

# Every CPU's counters with perf-tools' defaults (power-of-4, max 1048576)
# and its -f, on the workload's pid.
case_perf_stat_hist_filter_exact() {
  start_workload reads 1000 100
  buffered_run /tmp/psh.out perf-stat-hist -f "common_pid == $WL_PID" syscalls:sys_enter_read count 3
  has /tmp/psh.out "^Tracing syscalls:sys_enter_read \(Filter: common_pid == $WL_PID\), power-of-4, max 1048576, for 3 seconds\.\.\.\$" "the header"
  expect_counts /tmp/psh.out "0 0 30 120 480 370 0 0 0 0 0 0 0 "
}

# -n: a filter on comm, == for a name, ~ for a glob, where the kernel's
# filters take that form (asked by setting it on the event in tracefs,
# then clearing it: 3.10 takes neither, 4.4 no glob); where they do not,
# perf-stat-hist says the kernel refused its filter.
case_perf_stat_hist_name() {
  local filter=$T/events/syscalls/sys_enter_read/filter name takes
  defer "echo 0 > $filter"
  for name in reads 'rea*'; do
    takes=no
    case $name in
      *'*'*) echo "comm ~ \"$name\"" > $filter 2>/dev/null && takes=yes ;;
      *) echo "comm == \"$name\"" > $filter 2>/dev/null && takes=yes ;;
    esac
    echo 0 > $filter
    step "the kernel's filters take -n $name: $takes"
    start_workload reads 1000 100
    if [ $takes = yes ]; then
      buffered_run /tmp/psh.out perf-stat-hist -n "$name" -b 64 -f "common_pid == $WL_PID" syscalls:sys_enter_read count 3
      has /tmp/psh.out "issued by process name \"$(echo "$name" | sed 's/\*/\\*/g')\", specified buckets" "the header"
      expect_counts /tmp/psh.out "630 370 "
    else
      perf-stat-hist -n "$name" syscalls:sys_enter_read count 1 > /tmp/psh.out 2> /tmp/psh.err &&
        fail "perf-stat-hist -n $name ran on a kernel whose filters refuse it"
      has /tmp/psh.err "^perf-stat-hist: cannot set filter '\(count < 0\) && \(comm (==|~) \"" "the refusal"
      has /tmp/psh.err "this kernel's filters may not take comm" "the hint"
    fi
  done
}
