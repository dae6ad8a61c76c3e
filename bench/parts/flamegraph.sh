#!/bin/bash
# bench/parts/flamegraph.sh: the flame graph SVG of 100,000 unique stacks
# (build/bench/flamegraph_render, Google Benchmark, bench/src/
# flamegraph_render.cpp): 10-40 frames from 3,000 function names, Zipf-like
# counts; folded text to SVG (BM_FoldedToSvg, `tracekit flamegraph`) and a
# Report through write_flamegraph (BM_ReportToSvg, the `-o FILE.svg` path),
# with the SVG's size and the stacks drawn.
#
#   bench/parts/flamegraph.sh        (no root needed)
#
# Summary row (SUMMARY=FILE, see bench/lib.sh): "flame graph SVG, 100k
# unique stacks", BM_ReportToSvg's time, target < 1 s.
#
# Environment: FLAMEGRAPH_BENCH (build/bench/flamegraph_render, made with
# `make -s` if it is the default), MIN_TIME (seconds per benchmark, Google
# Benchmark's default).
set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
quick MIN_TIME=0.05
MIN_TIME=${MIN_TIME:-}
need_cmd jq jq
BIN=${FLAMEGRAPH_BENCH:-}
if [[ -z $BIN ]]; then
  make -s -C "$REPO" build/bench/flamegraph_render >&2 || die "make build/bench/flamegraph_render failed"
  BIN=$REPO/build/bench/flamegraph_render
fi
[[ -x $BIN ]] || die "$BIN not found"

json=$("$BIN" --benchmark_filter='BM_FoldedToSvg|BM_ReportToSvg' --benchmark_format=json \
  ${MIN_TIME:+--benchmark_min_time="$MIN_TIME"}) || die "$BIN failed"
jq -r '.benchmarks[] | "\(.name)\t\(.real_time|floor) \(.time_unit)\t\(.MB) MB\t\(.stacks) stacks"' <<<"$json"
ms=$(jq -r '[.benchmarks[] | select(.name == "BM_ReportToSvg") | .real_time] | first | floor' <<<"$json")
[[ $ms =~ ^[0-9]+$ ]] || die "no BM_ReportToSvg time in $BIN's output"
summary_row "flame graph SVG, 100k unique stacks" "${ms} ms" - - - "< 1 s" \
  "$( ((ms < 1000)) && echo met || echo missed)"
