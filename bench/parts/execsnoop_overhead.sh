#!/usr/bin/env bash
# execsnoop: how much it slows down a busy exec loop.
#
#   bench/parts/execsnoop_overhead.sh [ROUNDS]        (as root)
#
# The workload is build/workloads/execs (tests/workloads/execs.c): after its
# go it starts EXECS children one after another (default 2000), each exec'ing
# the workload again through the C library (execv, execvp, posix_spawn in
# turn) with five arguments, and waiting for it; it prints the children per
# second. Configurations, interleaved over ROUNDS rounds (default 5, the
# order rotated every round):
#
#   baseline   nothing
#   execsnoop  build/bin/execsnoop, stdout to a file (system-wide)
#   bpftrace   bpftrace printing the arguments at syscalls:sys_enter_execve
#              (join) and the PID and parent at sched:sched_process_exec, as
#              bcc's execsnoop does (if bpftrace is installed)
#
# Each tracer is started and the loop begins once it traces (its header
# printed); then it is stopped with SIGINT. Printed per configuration: the
# median, min and max execs/s and the slowdown of the median against the
# baseline's. perf-tools' execsnoop cannot run on a kernel without kprobes.
# Summary row (SUMMARY=FILE, see bench/lib.sh): execs/s and time per exec
# of execsnoop and bpftrace; target: execsnoop's median rate at least
# bpftrace's.
#
# Environment: ROUNDS (5), EXECS (2000), READY_TIMEOUT, TMPDIR, KEEP_TMP=1.
set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

quick ROUNDS=1 EXECS=200
ROUNDS=${1:-${ROUNDS:-5}}
EXECS=${EXECS:-2000}
posint ROUNDS "$ROUNDS"
posint EXECS "$EXECS"
need_root
WORKLOAD=$REPO/build/workloads/execs
[[ -x $WORKLOAD ]] || die "no $WORKLOAD: make tests"
bench_tmpdir execsnoop-bench
copy_tool "$REPO/build/bin/execsnoop" execsnoop
WPID=""
stop_workload() { [[ -n $WPID ]] && { kill "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=""; }; }

CONFIGS="baseline execsnoop"
command -v bpftrace >/dev/null && CONFIGS+=" bpftrace"

start_tracer() {
  case $1 in
    execsnoop) "$TMP/execsnoop" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace)
      bpftrace -e 'tracepoint:syscalls:sys_enter_execve { printf("%d ", tid); join(args->argv); }
        tracepoint:sched:sched_process_exec { printf("%d %d\n", pid, curtask->real_parent->tgid); }' \
        >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
}
tracer_ready() {
  case $1 in
    execsnoop) grep -q 'Ctrl-C to end' "$TMP/tracer.out" ;;
    bpftrace) ready_bpftrace ;;
  esac
}

one_run() { # config -> prints execs/s
  "$WORKLOAD" "$EXECS" 0 >"$TMP/w.out" 2>&1 &
  WPID=$!
  wait_line "$TMP/w.out" '^ready' 20 || die "the workload did not start"
  if [[ $1 != baseline ]]; then
    start_tracer "$1"
    wait_ready "$1" || die "$1 did not start: $(tracer_error)"
  fi
  kill -USR1 "$WPID"
  wait_line "$TMP/w.out" '^(done|failed)$' 600 || die "the workload did not finish"
  grep -q '^done$' "$TMP/w.out" || die "a child of the workload failed"
  if [[ -n $TPID ]]; then stop_pid "$TPID" 30; TPID=""; fi
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
    log "round $((r + 1)) $c: $rate execs/s"
    RATES[$c]+=" $rate"
  done
done
# shellcheck disable=SC2086
base=$(median 1 ${RATES[baseline]})
printf '%-10s %10s %10s %10s  %s\n' config median min max "time per exec vs baseline"
for c in $CONFIGS; do
  # shellcheck disable=SC2086
  read -r m lo hi _ <<<"$(stats 1 ${RATES[$c]})"
  printf '%-10s %10s %10s %10s  %s\n' "$c" "$m" "$lo" "$hi" "$(slowdown "$base" "$m")"
done
# the summary row: execs/s and the time per exec against the baseline's
# shellcheck disable=SC2086
cell() { [[ -n ${RATES[$1]:-} ]] || { echo -; return; }; local m; m=$(median 0 ${RATES[$1]}); echo "$m execs/s, $(slowdown "$base" "$m") per exec"; }
verdict=-
if [[ -n ${RATES[bpftrace]:-} ]]; then
  verdict="missed slower than bpftrace"
  # shellcheck disable=SC2086
  awk -v a="$(median 1 ${RATES[execsnoop]})" -v b="$(median 1 ${RATES[bpftrace]})" 'BEGIN {exit !(a >= b)}' && verdict=met
fi
# shellcheck disable=SC2086
summary_row "execsnoop, fork+exec loop (untraced $(median 0 ${RATES[baseline]}) execs/s)" "$(cell execsnoop)" \
  "$(cell bpftrace)" - - "<= bpftrace" "$verdict"
