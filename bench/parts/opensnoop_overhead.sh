#!/usr/bin/env bash
# opensnoop: how much it slows down a busy open() loop.
#
#   bench/parts/opensnoop_overhead.sh [ROUNDS]        (as root)
#
# The workload is build/workloads/opens (tests/workloads/opens.c): after its
# go it opens a file of its own OPENS times (default 200000) through the C
# library (open() and openat() in turn), closing each, then a missing file
# FAILED times (default 1000, ENOENT), and prints the opens per second.
# Configurations, interleaved over ROUNDS rounds (default 5, the order
# rotated every round):
#
#   baseline   nothing
#   opensnoop  build/bin/opensnoop, stdout to a file (system-wide): on a
#              kernel without kprobes or eprobes the file names come from
#              uprobes on the C library's open wrappers
#   bpftrace   bpftrace printing COMM, PID, FD and file name from
#              syscalls:sys_enter_open/openat and sys_exit_open/openat, as
#              bcc's opensnoop does (if bpftrace is installed)
#
# Each tracer is started and the loop begins once it traces (its header
# printed); then it is stopped with SIGINT. Printed per configuration: the
# median, min and max opens/s and the slowdown of the median against the
# baseline's, and the lines each tracer printed for the workload's file in
# its last round (the truth: OPENS + FAILED). perf-tools' opensnoop needs
# kprobes: it cannot run on a kernel without them.
# Summary row (SUMMARY=FILE, see bench/lib.sh): opens/s, time per open and
# opens seen of opensnoop and bpftrace; target: opensnoop's median rate at
# least bpftrace's, and every open of the last round printed.
#
# Environment: ROUNDS (5), OPENS (200000), FAILED (1000), READY_TIMEOUT,
# TMPDIR, KEEP_TMP=1.
set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

quick ROUNDS=1 OPENS=20000 FAILED=100
ROUNDS=${1:-${ROUNDS:-5}}
OPENS=${OPENS:-200000}
FAILED=${FAILED:-1000}
posint ROUNDS "$ROUNDS"
posint OPENS "$OPENS"
posint FAILED "$FAILED"
need_root
WORKLOAD=$REPO/build/workloads/opens
[[ -x $WORKLOAD ]] || die "no $WORKLOAD: make tests"
bench_tmpdir opensnoop-bench
copy_tool "$REPO/build/bin/opensnoop" opensnoop
WPID=""
stop_workload() { [[ -n $WPID ]] && { kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=""; }; }

CONFIGS="baseline opensnoop"
command -v bpftrace >/dev/null && CONFIGS+=" bpftrace"

start_tracer() {
  case $1 in
    opensnoop) "$TMP/opensnoop" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace)
      bpftrace -e 'tracepoint:syscalls:sys_enter_open, tracepoint:syscalls:sys_enter_openat {
          @file[tid] = args->filename; }
        tracepoint:syscalls:sys_exit_open, tracepoint:syscalls:sys_exit_openat /@file[tid]/ {
          printf("%-16s %-6d %4d %s\n", comm, pid, args->ret, str(@file[tid]));
          delete(@file[tid]); }' \
        >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
}
tracer_ready() {
  case $1 in
    opensnoop) grep -q 'Ctrl-C to end' "$TMP/tracer.out" ;;
    bpftrace) ready_bpftrace ;;
  esac
}

one_run() { # config -> prints opens/s
  "$WORKLOAD" "$OPENS" "$FAILED" >"$TMP/w.out" 2>&1 &
  WPID=$!
  wait_line "$TMP/w.out" '^ready' 20 || die "the workload did not start"
  if [[ $1 != baseline ]]; then
    start_tracer "$1"
    wait_ready "$1" || die "$1 did not start: $(tracer_error)"
  fi
  kill -USR1 "$WPID"
  wait_line "$TMP/w.out" '^done$' 600 || die "the workload did not finish"
  if [[ -n $TPID ]]; then stop_pid "$TPID" 30; TPID=""; fi
  [[ $1 == baseline ]] || grep -c " /tmp/tracekit-opens\.$WPID" "$TMP/tracer.out" >"$TMP/seen.$1"
  stop_workload
  sed -n 's/^rate //p' "$TMP/w.out"
}

poll_syscalls || die "unsupported architecture"
declare -A RATES
for ((r = 0; r < ROUNDS; r++)); do
  # shellcheck disable=SC2086
  round_order $((r + 1)) $CONFIGS
  for c in "${ORDER[@]}"; do
    rate=$(one_run "$c")
    log "round $((r + 1)) $c: $rate opens/s"
    RATES[$c]+=" $rate"
  done
done
# shellcheck disable=SC2086
base=$(median 1 ${RATES[baseline]})
printf '%-10s %10s %10s %10s  %-26s %s\n' config median min max "time per open vs baseline" \
  "lines (of $((OPENS + FAILED)))"
for c in $CONFIGS; do
  # shellcheck disable=SC2086
  read -r m lo hi _ <<<"$(stats 1 ${RATES[$c]})"
  seen=-
  [[ -f $TMP/seen.$c ]] && seen=$(cat "$TMP/seen.$c")
  printf '%-10s %10s %10s %10s  %-26s %s\n' "$c" "$m" "$lo" "$hi" "$(slowdown "$base" "$m")" "$seen"
done
# the summary row: opens/s, time per open against the baseline's, opens seen
truth=$((OPENS + FAILED))
cell() {
  [[ -n ${RATES[$1]:-} ]] || { echo -; return; }
  local m
  # shellcheck disable=SC2086
  m=$(median 0 ${RATES[$1]})
  echo "$m opens/s, $(slowdown "$base" "$m") per open, saw $(cat "$TMP/seen.$1") of $truth"
}
seen=$(cat "$TMP/seen.opensnoop")
if ((seen != truth)); then
  verdict="missed saw $seen of $truth"
elif [[ -z ${RATES[bpftrace]:-} ]]; then
  verdict="met every open seen (no bpftrace)"
else
  verdict="missed slower than bpftrace"
  # shellcheck disable=SC2086
  awk -v a="$(median 1 ${RATES[opensnoop]})" -v b="$(median 1 ${RATES[bpftrace]})" 'BEGIN {exit !(a >= b)}' && verdict=met
fi
# shellcheck disable=SC2086
summary_row "opensnoop, open() loop (untraced $(median 0 ${RATES[baseline]}) opens/s)" "$(cell opensnoop)" \
  "$(cell bpftrace)" - - "<= bpftrace, every open seen" "$verdict"
