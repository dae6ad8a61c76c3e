#!/usr/bin/env bash
# The cost of naming the caller of a probed function (issue 16): a uprobe
# at the entry of a function built without frame pointers, with user
# stacks, per call.
#
#   bench/parts/entry_caller.sh [ROUNDS] [CALLS]        (as root)
#
# The workload is bench/src/call_loop.c, compiled into the temp dir (-O2, no
# frame pointers): CALLS calls (default 200000) of bench_probed() from
# main, and the CPU time (user + system, getrusage) they took. Per
# configuration, the median CPU ns per call over ROUNDS rounds (default 3,
# interleaved, the order rotated every round):
#
#   baseline        nothing
#   stackcount      build/bin/stackcount -U TMP/call_loop:bench_probed
#                   (user callchain + the 8 bytes at the stack pointer:
#                   the caller)
#   stackcount-fp   the same with TRACEKIT_KERNEL_FEATURES=-user_stack
#                   (callchain only: the caller missing, as before)
#   bpftrace        bpftrace -e 'uprobe:TMP/call_loop:bench_probed
#                   { @[ustack] = count(); }'
#   perf            perf probe -x TMP/call_loop bench_probed, then
#                   perf record -e probe_call_loop:bench_probed -g -a
#
# and the added ns per call against the baseline. Whether each names the
# caller (main): from its output, "caller" yes/no. The perf probe is
# deleted at the end (perf probe -d).
# Summary row (SUMMARY=FILE, see bench/lib.sh): the added ns per call of
# each, and whether it named the caller; target: stackcount names it.
#
# Environment: ROUNDS (3), CALLS (200000), READY_TIMEOUT, TMPDIR, KEEP_TMP=1.
set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"

quick ROUNDS=1 CALLS=20000
ROUNDS=${1:-${ROUNDS:-3}}
CALLS=${2:-${CALLS:-200000}}
posint ROUNDS "$ROUNDS"
posint CALLS "$CALLS"
need_root
poll_syscalls || die "unsupported architecture"
need_cmd bpftrace bpftrace
need_cmd perf linux-perf
bench_tmpdir entry_caller
CONFIGS="baseline stackcount stackcount-fp bpftrace perf"
PROBE_ADDED=""

stop_workload() {
  [[ -n $PROBE_ADDED ]] && perf probe -q -d probe_call_loop:bench_probed >/dev/null 2>&1
  PROBE_ADDED=""
}

cc -O2 -fomit-frame-pointer -g -o "$TMP/call_loop" "$REPO/bench/src/call_loop.c" || die "cannot build call_loop"
copy_tool "$REPO/build/bin/stackcount" stackcount
perf probe -q -x "$TMP/call_loop" bench_probed >/dev/null 2>&1 || die "perf probe failed"
PROBE_ADDED=1

tracer_ready() {
  case $1 in
    bpftrace) ready_bpftrace ;;
    *) ready_perf ;;
  esac
}
start_tracer() {
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $1 in
    stackcount) "$TMP/stackcount" -U "$TMP/call_loop:bench_probed" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    stackcount-fp) TRACEKIT_KERNEL_FEATURES=-user_stack "$TMP/stackcount" -U "$TMP/call_loop:bench_probed" \
                     >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace) bpftrace -e "uprobe:$TMP/call_loop:bench_probed { @[ustack] = count(); }" \
                >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) perf record -e probe_call_loop:bench_probed -g -a -o "$TMP/perf.data" \
            >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  # shellcheck disable=SC2034  # read by lib.sh (run_traced)
  TPID=$!
}
loop() { "$TMP/call_loop" "$CALLS" >"$TMP/loop.out"; }

declare -A NS CALLER
for ((r = 0; r < ROUNDS; r++)); do
  read -r -a order <<<"$CONFIGS"
  order=("${order[@]:r % 5}" "${order[@]:0:r % 5}")
  for cfg in "${order[@]}"; do
    if [[ $cfg == baseline ]]; then
      loop
    else
      run_traced "$cfg" loop loop || die "$cfg: $TRACER_ERR"
    fi
    NS[$cfg]+=" $(sed -n 's/.*cpu_ns_per_call \([0-9.]*\).*/\1/p' "$TMP/loop.out")"
    case $cfg in
      stackcount*) grep -A1 -x '  bench_probed' "$TMP/tracer.out" | grep -qx '  main' && CALLER[$cfg]=yes ;;
      bpftrace) grep -A1 'bench_probed+0$' "$TMP/tracer.out" | grep -q 'main+' && CALLER[$cfg]=yes ;;
      perf) perf script -i "$TMP/perf.data" -F ip,sym 2>/dev/null | grep -A1 -m1 'bench_probed' |
              grep -q ' main' && CALLER[$cfg]=yes ;;
    esac
  done
done
# shellcheck disable=SC2086
base=$(median 1 ${NS[baseline]})
printf '%-14s %12s %12s %7s  %s\n' config "cpu ns/call" "added ns" caller "rounds"
for cfg in $CONFIGS; do
  # shellcheck disable=SC2086
  m=$(median 1 ${NS[$cfg]})
  added=$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.1f", a - b }')
  c=${CALLER[$cfg]:-no}
  [[ $cfg == baseline ]] && { added=-; c=-; }
  printf '%-14s %12s %12s %7s  %s\n' "$cfg" "$m" "$added" "$c" "${NS[$cfg]# }"
done
# the summary row: added CPU ns per call, and whether each named the caller
cell() {
  local m
  # shellcheck disable=SC2086
  m=$(median 1 ${NS[$1]})
  echo "+$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.0f", a - b }') ns/call, caller $([[ ${CALLER[$1]:-} == yes ]] || echo "not ")named"
}
verdict="missed caller not named"
[[ ${CALLER[stackcount]:-} == yes ]] && verdict=met
summary_row "uprobe at a function's entry, no frame pointers, user stacks (untraced $base ns/call)" \
  "$(cell stackcount) (without the stack sample: $(cell stackcount-fp))" "$(cell bpftrace)" "$(cell perf)" - \
  "names the caller" "$verdict"
