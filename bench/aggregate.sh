#!/bin/bash
# bench/aggregate.sh: the aggregation microbenchmark (build/bench/aggregate_bench)
# as a table and as rows of the make bench summary.
#
#   bench/aggregate.sh              # 5 repetitions, interleaved
#   bench/aggregate.sh 9            # 9 repetitions (or REPS=9)
#
# BM_Events replays 1,048,576 events (10-40 frame kernel and user stacks,
# 5,000 Zipf-drawn signatures, process names as strings) through
# aggregate::StackCounts::add, the call profile and stackcount make per
# event, and through std::unordered_map and absl::flat_hash_map used two ways
# (two-level: name, stack and key maps; single-key: one map keyed by the
# whole signature). Google Benchmark interleaves the repetitions of all of
# them at random (--benchmark_enable_random_interleaving), so load from other
# processes spreads over every aggregator alike; the table gives the median,
# min and max events/s per core (CPU time) of each, and Tracekit's ratio to
# the best std and the best absl median. BM_Memory stores 10,000 and 100,000
# distinct stacks with one key each and reports the peak heap bytes per
# stack.
#
# Summary rows (SUMMARY=FILE, see bench/lib.sh): "aggregation, events/s per
# core" (target >=20 M/s and >=2x std; the std and absl figures in the target
# cell) and "aggregation memory, 100k stacks" (bytes per stack, absl's
# beside it). No root needed. Takes about a minute.
#
# Environment: REPS (5), AGGREGATE_BENCH (build/bench/aggregate_bench, made
# with `make -s` if it is the default), TMPDIR, KEEP_TMP=1.
set -u -o pipefail
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
REPS=${1:-${REPS:-5}}
posint REPS "$REPS"
need_cmd jq jq
stop_workload() { :; }
bench_tmpdir aggregate

BIN=${AGGREGATE_BENCH:-}
if [[ -z $BIN ]]; then
  make -s -C "$REPO" build/bench/aggregate_bench >&2 || die "make build/bench/aggregate_bench failed"
  BIN=$REPO/build/bench/aggregate_bench
fi
[[ -x $BIN ]] || die "$BIN not found"

load_start
"$BIN" --benchmark_repetitions="$REPS" --benchmark_enable_random_interleaving=true \
  --benchmark_out="$TMP/out.json" --benchmark_out_format=json >"$TMP/console.txt" 2>&1 ||
  { cat "$TMP/console.txt" >&2; die "$BIN failed"; }
load_end

# per run: name <TAB> events/s (BM_Events) or bytes/stack (BM_Memory)
jq -r '.benchmarks[] | select(.run_type == "iteration") |
  if (.name | startswith("BM_Events/")) then "\(.run_name)\t\(.items_per_second)"
  else "\(.run_name)\t\(.bytes_per_stack)" end' "$TMP/out.json" >"$TMP/runs.tsv"
values() { awk -F'\t' -v n="$1" '$1 == n {print $2}' "$TMP/runs.tsv"; }
mps() { awk -v v="$1" 'BEGIN {printf "%.2f", v / 1e6}'; }

AGGS=(Tracekit TracekitTables StdTwoLevel StdSingleKey AbslTwoLevel AbslSingleKey)
declare -A MED
echo "aggregation: $REPS interleaved repetitions of each, M events/s per core (CPU time)"
printf '%-16s %8s %8s %8s %12s\n' aggregator median min max "Tracekit is"
for a in "${AGGS[@]}"; do
  # shellcheck disable=SC2046  # one value per word
  read -r med min max _ <<<"$(stats 0 $(values "BM_Events/$a"))"
  MED[$a]=$med
done
for a in "${AGGS[@]}"; do
  # shellcheck disable=SC2046
  read -r med min max _ <<<"$(stats 0 $(values "BM_Events/$a"))"
  printf '%-16s %8s %8s %8s %12s\n' "$a" "$(mps "$med")" "$(mps "$min")" "$(mps "$max")" \
    "$(awk -v a="${MED[Tracekit]}" -v b="$med" 'BEGIN {printf "%.2fx", a / b}')"
done
echo
echo "memory: peak heap bytes per stack, one key per stack (frames: 200 bytes per stack)"
printf '%-16s %10s %10s\n' aggregator 10k 100k
for a in "${AGGS[@]}"; do
  printf '%-16s %10.0f %10.0f\n' "$a" "$(values "BM_Memory/$a/10000/iterations:1" | head -n1)" \
    "$(values "BM_Memory/$a/100000/iterations:1" | head -n1)"
done
echo
load_summary

best() { # the larger median of two aggregators
  awk -v a="${MED[$1]}" -v b="${MED[$2]}" 'BEGIN {print (a > b ? a : b)}'
}
STD=$(best StdTwoLevel StdSingleKey)
ABSL=$(best AbslTwoLevel AbslSingleKey)
TK=${MED[Tracekit]}
RATIO=$(awk -v a="$TK" -v b="$STD" 'BEGIN {printf "%.2f", a / b}')
VERDICT=met
awk -v t="$TK" -v r="$RATIO" 'BEGIN {exit !(t >= 20e6 && r >= 2)}' ||
  VERDICT="missed $(mps "$TK") M/s, $RATIO x std (memory-latency bound, see bench/README.md)"
summary_row "aggregation, events/s per core" \
  "$(mps "$TK") M/s (${RATIO}x std, $(awk -v a="$TK" -v b="$ABSL" 'BEGIN {printf "%.2f", a / b}')x absl)" \
  - - ">=20 M/s, >=2x std (std $(mps "$STD"), absl $(mps "$ABSL") M/s)" "$VERDICT"
summary_row "aggregation memory, 100k stacks" \
  "$(printf '%.0f' "$(values "BM_Memory/Tracekit/100000/iterations:1" | head -n1)") B/stack" - - \
  "- (absl $(printf '%.0f' "$(values "BM_Memory/AbslSingleKey/100000/iterations:1" | head -n1)"), std $(printf '%.0f' "$(values "BM_Memory/StdTwoLevel/100000/iterations:1" | head -n1)") B/stack)" -
