# tests/vm/cachestat.sh: cachestat on each of its ways of counting. The
# truth: scripts/vm gives the guest a 16 MiB NVMe drive (/dev/nvme0n1,
# 4096 pages of 4 KiB); read whole through the page cache after
# drop_caches, each of its pages enters the cache once (4096 additions, all
# misses); read again, none does (0 misses, only hits). The device is held
# open meanwhile: the kernel drops a block device's cache at its last close.
# The files of the initramfs cannot serve: ramfs pages never miss.
# Neither guest kernel has the function profiler (CONFIG_FUNCTION_PROFILER
# is off in Debian's kernels): the default way there is perf counters on
# kprobes.
# vm-static: only: cachestat_kprobe_counters_misses_then_hits cachestat_functions_of_this_kernel

DEV=/dev/nvme0n1
PAGES=4096

# cold_and_warm NAME: drops the caches, then reads $DEV twice, each under
# its own cachestat -D (one row: an interval longer than the run, the row
# printed at SIGINT), into /tmp/NAME.cold and /tmp/NAME.warm.
cold_and_warm() {
  [ -b $DEV ] || fail "no $DEV (scripts/vm adds the drive)"
  exec 3< $DEV
  defer "exec 3<&-"
  sync
  echo 3 > /proc/sys/vm/drop_caches
  read_counted /tmp/$1.cold
  read_counted /tmp/$1.warm
}

# cachestat_around OUT REGEX ACTION ARGS...: runs cachestat ARGS in the
# background until OUT has a line matching REGEX, then runs ACTION (a
# command line, or ":"), then ends cachestat with SIGINT (or the signal
# $CS_SIGNAL names); fails when it exits with an error.
cachestat_around() {
  local out=$1 re=$2 action=$3 tool
  shift 3
  rm -f "$out" "$out.err"
  cachestat "$@" > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for "$out" "$re"
  eval "$action"
  kill -"${CS_SIGNAL:-INT}" $tool
  wait $tool || fail "cachestat exited with $?: $(tail -n 3 "$out.err")"
}

read_counted() {
  cachestat_around "$1" '^ +HITS +MISSES +DIRTIES +RATIO +BUFFERS_MB +CACHE_MB +DEBUG$' \
    "dd if=$DEV of=/dev/null bs=64k 2>/dev/null || fail 'reading $DEV failed'" -D 600
  step "$(basename "$1"): $(grep -E '^ +[0-9]+ ' "$1")"
}

# The row's FIELD: hits misses dirties accessed buffer_dirty added dirtied.
field() {
  awk -v f="$2" '/^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+% / {
    gsub(/[()]/, "")
    v["hits"] = $1; v["misses"] = $2; v["dirties"] = $3
    v["accessed"] = $7; v["buffer_dirty"] = $8; v["added"] = $9; v["dirtied"] = $10
    print v[f]; exit }' "$1"
}

expect_field() {
  local got
  got=$(field "$1" "$2")
  [ -n "$got" ] && [ "$got" "$3" "$4" ] || { cat "$1"; fail "$2 is '$got' in $1, expected $3 $4"; }
}

# Misses, then hits: the exact part (pages added, misses) exactly.
check_cold_and_warm() {
  expect_field /tmp/$1.cold added -eq $PAGES
  expect_field /tmp/$1.cold misses -eq $PAGES
  expect_field /tmp/$1.warm added -eq 0
  expect_field /tmp/$1.warm misses -eq 0
  expect_field /tmp/$1.warm hits -gt 0
  expect_field /tmp/$1.warm accessed -gt 0
  has /tmp/$1.cold '^Ending tracing\.\.\.$' "the end line"
}

# The default way here: perf counters on kprobes.
case_cachestat_kprobe_counters_misses_then_hits() {
  cold_and_warm kp
  has /tmp/kp.cold '^Counting cache functions\.\.\. Output every 600 seconds\.$' "the header"
  has /tmp/kp.cold '^DEBUG: counting .* with perf counters on kprobes\.$' "the way"
  check_cold_and_warm kp
}

# The function tracer counted by address (kprobes forced off), and the
# same counts as with kprobes where they are exact.
case_cachestat_function_tracer_misses_then_hits() {
  export TRACEKIT_KERNEL_FEATURES="${TRACEKIT_KERNEL_FEATURES:+$TRACEKIT_KERNEL_FEATURES,}-function_profiler,-kprobes"
  cold_and_warm ft
  has /tmp/ft.cold '^DEBUG: counting .* with the function tracer, counted by address\.$' "the way"
  check_cold_and_warm ft
}

# Each role's function, by this kernel's generation: the folio functions
# where the kernel has them (6.1), the page functions before (5.10).
case_cachestat_functions_of_this_kernel() {
  cachestat_around /tmp/cs.out 'DEBUG$' : -D 600
  local f=$T/available_filter_functions
  if grep -qx filemap_add_folio $f; then
    has /tmp/cs.out '^DEBUG: counting folio_mark_accessed, mark_buffer_dirty, filemap_add_folio, (folio_account_dirtied|__folio_mark_dirty) ' "the folio functions"
  else
    has /tmp/cs.out '^DEBUG: counting mark_page_accessed, mark_buffer_dirty, add_to_page_cache_lru, account_page_dirtied ' "the page functions"
  fi
}

# -t: the time of day first; rows every second.
case_cachestat_timestamps_intervals() {
  cachestat_around /tmp/cs.out '^[0-9][0-9]:[0-9][0-9]:[0-9][0-9] .*%.*[0-9]$' : -t 1
  has /tmp/cs.out '^TIME +HITS +MISSES +DIRTIES +RATIO +BUFFERS_MB +CACHE_MB$' "the columns"
}

# Every way forced off: one line naming them, exit 1.
case_cachestat_refused_without_a_way() {
  export TRACEKIT_KERNEL_FEATURES="-function_profiler,-kprobes,-function_tracer"
  rm -f /tmp/cs.out
  cachestat 1 > /tmp/cs.out 2> /tmp/cs.err && fail "cachestat exited 0"
  [ ! -s /tmp/cs.out ] || fail "output: $(cat /tmp/cs.out)"
  has /tmp/cs.err '^cachestat: cannot count kernel functions here: kprobes turned off .*CONFIG_KPROBE_EVENTS' "the reason"
}

# A closed stdout (| head) and SIGTERM end the run at once; the runner
# checks that tracefs is left as it was.
case_cachestat_head_and_sigterm() {
  local start
  start=$(date +%s)
  cachestat 0.2 | head -n 4 > /tmp/cs.head
  [ $(($(date +%s) - start)) -le 20 ] || fail "cachestat | head took $(($(date +%s) - start)) s"
  expect_lines /tmp/cs.head '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+% ' 2
  local CS_SIGNAL=TERM
  cachestat_around /tmp/cs.out '%' : 0.2
  has /tmp/cs.out '^Ending tracing\.\.\.$' "the end line"
}

# Two runs at once, each in a probe group and instance of its own (the
# default way and the function tracer), around one cold read: both count
# every page added; the runner checks that tracefs is left as it was.
case_cachestat_two_runs_at_once() {
  [ -b $DEV ] || fail "no $DEV (scripts/vm adds the drive)"
  exec 3< $DEV
  defer "exec 3<&-"
  sync
  echo 3 > /proc/sys/vm/drop_caches
  rm -f /tmp/cs2.out /tmp/cs2.out.err
  TRACEKIT_KERNEL_FEATURES="${TRACEKIT_KERNEL_FEATURES:+$TRACEKIT_KERNEL_FEATURES,}-function_profiler,-kprobes" \
    cachestat -D 600 > /tmp/cs2.out 2> /tmp/cs2.out.err &
  local second=$!
  defer "kill $second 2>/dev/null"
  wait_for /tmp/cs2.out '^ +HITS +MISSES +DIRTIES +RATIO +BUFFERS_MB +CACHE_MB +DEBUG$'
  read_counted /tmp/cs1.out
  kill -INT $second
  wait $second || fail "the second cachestat exited with $?: $(tail -n 3 /tmp/cs2.out.err)"
  step "second: $(grep -E '^ +[0-9]+ ' /tmp/cs2.out)"
  local f
  for f in /tmp/cs1.out /tmp/cs2.out; do
    expect_field $f added -eq $PAGES
    expect_field $f misses -eq $PAGES
  done
}
