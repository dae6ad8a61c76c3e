#!/usr/bin/env bash
# Overhead of off-CPU tracing on a context-switch-heavy microbenchmark.
#
#   bench/parts/offcputime_overhead.sh [ROUNDS]        (as root)
#
# Runs `taskset -c 0 perf bench sched pipe -l 100000` (usecs/op) under each
# configuration:
#
#   baseline  nothing
#   tracekit  build/bin/offcputime -f                 (system-wide, output to a file)
#   bpftrace  bpftrace -e 'tracepoint:sched:sched_switch { @[kstack, ustack, comm] = count(); }'
#   perf      perf record -N -e sched:sched_switch -g -a -o TMP/perf.data
#   floor     bench/src/ring_floor.c (compiled into the temp dir): sched_switch
#             sampled on every CPU as offcputime samples it (sample type,
#             callchains, clock, process events, ring size), the rings
#             emptied without reading the samples: the kernel's own cost of
#             the samples, what any reader of them adds to a switch at least
#   floorread ring_floor --read: the same, and every word of every record
#             read (summed), as a reader that aggregates them must: adds
#             the cost of moving the samples' cache lines to the reader's
#             CPU and back to the writer's
#   floorswitch  ring_floor --read --switch CPU: floorread, and context-switch
#             records written on one CPU other than the benchmark's (the
#             first), as offcputime keeps them on a CPU whose switches out
#             of idle sched_switch does not show (offcpu/pairing.hpp; CPU 1
#             of the 6.18 VM): while such an event exists the kernel runs
#             perf's sched hooks at every switch of every CPU
#
# interleaved over ROUNDS rounds (default 11; the order is rotated every round
# and reversed every other cycle so no configuration always follows the same
# one), and prints per configuration the median, min and max usecs/op, the
# slowdown of the median against the baseline median, the added cost per
# context switch (median minus baseline median, over the 2 switches of each
# op: the token goes to the other process and back), the tracer's own CPU
# time while the benchmark ran (its threads' schedstat, median us per
# switch, on whichever CPU it ran), and the events each tracer lost (ring
# buffer overflow).
#
# With SUMMARY=FILE (bench/run, make bench) it adds the row
# "offcputime, perf bench sched pipe" to the summary table: each tracer's
# slowdown, added us per switch and lost events; target "<= bpftrace, < perf,
# 0 lost" (tracekit's median at most bpftrace's, below perf's, nothing lost).
# The verdict adds, for bpftrace and perf, in how many rounds tracekit's run
# was the faster of the two and the median of the per-round differences
# (bench/lib.sh paired): runs vary by several percent from one to the next
# here, and the three tracers lie within a few percent of each other, so
# with 5 rounds the medians' order could flip between make bench runs;
# hence 11. A verdict "missed" names the floors' added us per switch
# (floor, floorread, floorswitch) and the same paired figures against
# floorswitch.
#
# Each tracer is started, and the benchmark begins only once it is tracing:
#   tracekit  perf_event fds open and the main thread blocked in poll/ppoll
#   bpftrace  "Attaching 1 probe..." printed, perf_event fds open, main thread
#             blocked in epoll_wait
#   perf      perf_event fds open and the main thread blocked in poll (perf
#             record enables its events before it first polls)
#   floor, floorread, floorswitch  the same as perf (enables its events before
#             it first polls)
# then stopped with SIGINT after the benchmark and waited for.
#
# Lost events:
#   tracekit  "WARNING: N events lost" on stderr (absent = 0); its
#             "N off-CPU periods may end early" (switch-ins sched_switch
#             missed on a CPU without switch records) go in the notes
#   bpftrace  "Lost N events" on stderr (absent = 0); it aggregates in the
#             kernel, so this is normally 0. Stack-id lookup failures (stack
#             map hash collisions) are counted separately in the notes.
#   perf      sum of the lost-sample counts perf record stores in
#             PERF_RECORD_LOST_SAMPLES (`perf report --stats`, per-event
#             "LOST_SAMPLES events" lines); if there are none but the file
#             has PERF_RECORD_LOST records, the sum of their "lost:" fields
#             (`perf report -D`). Both count every record the kernel could
#             not write to the ring buffers.
#   floor, floorread, floorswitch  the sum of its rings' PERF_RECORD_LOST
#             records, which it prints on exit ("ring_floor: N samples, M lost")
#
# Environment (all optional):
#   ROUNDS=11          rounds (the first argument wins)
#   LOOPS=100000       perf bench sched pipe -l
#   BENCH_CPU=0        CPU the benchmark is pinned to (tracers are unpinned)
#   CONFIGS="baseline tracekit bpftrace perf floor floorread floorswitch"
#                      subset / order of configurations
#   OFFCPUTIME=PATH    offcputime binary (default: build/bin/offcputime of this
#                      repo; it is copied to the temp dir first so a rebuild
#                      during the run does not change what is measured)
#   RESULTS=FILE       also write every run as CSV (round,config,usecs_op,lost,status)
#   READY_TIMEOUT=30   seconds to wait for a tracer to be tracing
#   STOP_TIMEOUT=300   seconds to wait for a tracer to exit after SIGINT
#   TMPDIR             where the temp dir (tracer output, perf.data) goes
#
# perf record gets -N (--no-buildid-cache) so that it does not copy binaries
# into ~/.debug; that only changes what perf does after it stops, not while it
# records. Everything else is as in the issue. The script leaves nothing
# running, removes its temp dir, and checks that tracefs (instances,
# kprobe/uprobe/dynamic events, set_event, tracing_on, current_tracer) is the
# same after the run as before.

set -u -o pipefail
# what the overhead benchmarks share (tracer start/readiness/stop, lost
# events, tracefs check, statistics): bench/lib.sh
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

case "${1:-}" in -h|--help) usage; exit 0 ;; esac

quick ROUNDS=1 LOOPS=10000
ROUNDS=${1:-${ROUNDS:-11}}
LOOPS=${LOOPS:-100000}
BENCH_CPU=${BENCH_CPU:-0}
CONFIGS=${CONFIGS:-"baseline tracekit bpftrace perf floor floorread floorswitch"}
OFFCPUTIME=${OFFCPUTIME:-$REPO/build/bin/offcputime}
RESULTS=${RESULTS:-}
BT_PROG='tracepoint:sched:sched_switch { @[kstack, ustack, comm] = count(); }'

posint ROUNDS "$ROUNDS"; posint LOOPS "$LOOPS"
need_root
read -r -a CFGS <<<"$CONFIGS"
((${#CFGS[@]})) || die "CONFIGS is empty"

# --- tools -----------------------------------------------------------------
need_cmd perf linux-perf
need_cmd taskset util-linux
for c in "${CFGS[@]}"; do
  case $c in
    baseline | perf) ;;
    tracekit) [[ -x $OFFCPUTIME ]] || die "$OFFCPUTIME missing: run 'make -C $REPO all'" ;;
    bpftrace) need_cmd bpftrace bpftrace ;;
    floor | floorread | floorswitch) need_cmd gcc gcc ;;
    *) die "unknown config '$c' (baseline tracekit bpftrace perf floor floorread floorswitch)" ;;
  esac
done
perf bench sched pipe -h >/dev/null 2>&1 || perf bench sched pipe -l 10 >/dev/null 2>&1 ||
  die "'perf bench sched pipe' does not run"
poll_syscalls || die "unsupported architecture $(uname -m) (add its poll/epoll syscall numbers)"

# --- temp dir, cleanup -------------------------------------------------------
bench_tmpdir offcpu-overhead
BPID=""   # benchmark currently running (started by us)
# shellcheck disable=SC2317  # invoked from cleanup
stop_workload() { [[ -n $BPID ]] && stop_pid "$BPID" 5; }

# --- tracers -----------------------------------------------------------------
tracer_ready() { # CFG: is $TPID tracing
  case $1 in
    tracekit | perf | floor | floorread | floorswitch) ready_perf ;; # perf_event fds open, blocked in poll/ppoll
    bpftrace) ready_bpftrace ;;
  esac
}

start_tracer() { # cfg -> TPID
  local cfg=$1
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $cfg in
    tracekit) "$TMP/offcputime" -f >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace) bpftrace -e "$BT_PROG" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) perf record -N -e sched:sched_switch -g -a -o "$TMP/perf.data" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    floor) "$TMP/ring_floor" "$SWITCH_ID" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    floorread) "$TMP/ring_floor" --read "$SWITCH_ID" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    floorswitch) "$TMP/ring_floor" --read --switch "$RECORDS_CPU" "$SWITCH_ID" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
}

# lost_events CFG -> "LOST<TAB>NOTES" (after the tracer exited)
lost_events() {
  local err=$TMP/tracer.err lost notes="" n
  case $1 in
    tracekit)
      lost=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$err")
      n=$(sum_matches '^WARNING: \([0-9]*\) off-CPU periods may end early.*' "$err")
      ((n)) && notes+="ended_early=$n "
      n=$(sum_matches '^WARNING: \([0-9]*\) stack traces lost.*' "$err")
      ((n)) && notes+="stacks_missing=$n "
      n=$(sum_matches '^WARNING: \([0-9]*\) records could not be decoded.*' "$err")
      ((n)) && notes+="undecodable=$n "
      printf '%s\t%s\n' "$lost" "${notes% }"
      ;;
    bpftrace) lost_bpftrace ;;
    perf) lost_perf "$(perf_stats)" ;;
    floor | floorread | floorswitch)
      lost=$(sed -n 's/^ring_floor: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$TMP/tracer.err")
      printf '%s\t\n' "${lost:-0}"
      ;;
  esac
}

# tracer_threads_ns -> "TID NS" lines: the CPU time of each of $TPID's
# threads so far (ns, from its schedstat)
tracer_threads_ns() {
  local f
  for f in /proc/"$TPID"/task/*/schedstat; do
    [[ -r $f ]] || continue
    f=${f%/schedstat}
    echo "${f##*/} $(cut -d' ' -f1 "$f/schedstat" 2>/dev/null)"
  done
}

# run_bench_traced: run_bench, and TCPU = the tracer's CPU ns during it: the
# growth of each thread alive at the end (a thread that exited in between,
# such as one loading symbols at start, is left out)
run_bench_traced() {
  local a b
  a=$(tracer_threads_ns); run_bench; b=$(tracer_threads_ns)
  TCPU=$(awk 'NR == FNR {if (NF == 2) was[$1] = $2; next}
              NF == 2 {s += $2 - ($1 in was ? was[$1] : 0); n++}
              END {if (n) print s}' <(echo "$a") <(echo "$b"))
}

# per_switch MEDIAN BASE -> the added usecs per context switch, "+1.23"
# (perf bench sched pipe: 2 switches per op)
per_switch() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%+.2f", (a - b) / 2}'; }

# run_bench -> US = usecs/op, or empty on failure (no subshell: BPID stays visible to cleanup)
run_bench() {
  US=""
  taskset -c "$BENCH_CPU" perf bench sched pipe -l "$LOOPS" >"$TMP/bench.out" 2>&1 &
  BPID=$!
  wait "$BPID"; local rc=$?; BPID=""
  ((rc == 0)) || { log "  perf bench failed (rc=$rc): $(tail -n 3 "$TMP/bench.out" | tr '\n' ' ')"; return; }
  US=$(awk '/usecs\/op/ {print $1; exit}' "$TMP/bench.out")
}

# --- run -----------------------------------------------------------------------
if in_list tracekit "${CFGS[*]}"; then
  copy_tool "$OFFCPUTIME" offcputime
fi
if in_list floor "${CFGS[*]}" || in_list floorread "${CFGS[*]}" || in_list floorswitch "${CFGS[*]}"; then
  gcc -O2 -o "$TMP/ring_floor" "$REPO/bench/src/ring_floor.c" || die "cannot compile bench/src/ring_floor.c"
  SWITCH_ID=$(cat "$TRACEFS/events/sched/sched_switch/id") ||
    die "no sched:sched_switch tracepoint id"
  # floorswitch's switch records: the first CPU that is not the benchmark's
  RECORDS_CPU=0
  ((BENCH_CPU == 0 && $(nproc) > 1)) && RECORDS_CPU=1
fi

TRACEFS_BEFORE=$(tracefs_state)
log "offcputime overhead: ${ROUNDS} rounds, perf bench sched pipe -l $LOOPS on CPU $BENCH_CPU, $(nproc) CPUs, $(uname -r)"
log "configs: ${CFGS[*]}"
load_start
if pgrep -x qemu-system-x86 >/dev/null 2>&1 || pgrep -f '^qemu-system' >/dev/null 2>&1; then
  log "WARNING: a qemu-system process is running; numbers will be noisy"
fi
[[ -n $RESULTS ]] && echo "round,config,usecs_op,lost,status" >"$RESULTS"

declare -A VALS RVALS LOST LOSTMAX NOTES FAILS FAILMSG TCPUS
for c in "${CFGS[@]}"; do VALS[$c]="" RVALS[$c]=""; LOST[$c]=0; LOSTMAX[$c]=0; NOTES[$c]=""; FAILS[$c]=0; FAILMSG[$c]=""; TCPUS[$c]=""; done

# warm-up (discarded): page cache, perf binary
run_bench

for ((r = 1; r <= ROUNDS; r++)); do
  round_order "$r" "${CFGS[@]}"
  log "round $r/$ROUNDS: ${ORDER[*]}"
  for cfg in "${ORDER[@]}"; do
    status=ok lost="" notes="" us="" TCPU=""
    if [[ $cfg == baseline ]]; then
      run_bench; us=$US
    else
      run_traced "$cfg" "the benchmark" run_bench_traced; rc=$?
      if ((rc == 1)); then
        status=failed FAILMSG[$cfg]=$TRACER_ERR
      else
        us=$US
        ((rc == 2)) && status=failed FAILMSG[$cfg]=$TRACER_ERR
        IFS=$'\t' read -r lost notes < <(lost_events "$cfg")
      fi
      rm -f "$TMP/perf.data" "$TMP/perf.data.old" "$TMP/tracer.out"
    fi
    [[ -n $us ]] || status=failed
    if [[ $status == ok ]]; then
      VALS[$cfg]+="$us " RVALS[$cfg]+="$r:$us "
      [[ -n $TCPU ]] && TCPUS[$cfg]+="$(awk -v n="$TCPU" -v l="$LOOPS" 'BEGIN {printf "%.3f", n / 1000 / (2 * l)}') "
      if [[ $cfg != baseline ]]; then
        LOST[$cfg]=$((LOST[$cfg] + lost))
        ((lost > LOSTMAX[$cfg])) && LOSTMAX[$cfg]=$lost
        [[ -n $notes ]] && NOTES[$cfg]+="$notes;"
      fi
    else
      FAILS[$cfg]=$((FAILS[$cfg] + 1))
    fi
    log "  $(printf '%-11s %10s usecs/op  lost %-8s %s %s' "$cfg" "${us:--}" "${lost:--}" "$status" "$notes")"
    [[ -n $RESULTS ]] && echo "$r,$cfg,${us},${lost},$status" >>"$RESULTS"
  done
done

load_end

# --- summary -------------------------------------------------------------------
base_med=""
# VALS[...] are space-separated lists: split on purpose
# shellcheck disable=SC2086
in_list baseline "${CFGS[*]}" && base_med=$(median 3 ${VALS[baseline]})

echo
echo "offcputime overhead: perf bench sched pipe -l $LOOPS pinned to CPU $BENCH_CPU; $ROUNDS rounds, interleaved; $(nproc) CPUs, kernel $(uname -r)"
load_summary
echo
printf '%-11s %5s %10s %10s %10s %17s %10s %10s %14s  %s\n' config runs "median" min max "slowdown" "added" "tracer CPU" "lost sum/max" notes
printf '%-11s %5s %10s %10s %10s %17s %10s %10s %14s  %s\n' "" "" "usecs/op" "usecs/op" "usecs/op" "vs baseline" "us/switch" "us/switch" "per run" ""
declare -A CELL MED
for c in "${CFGS[@]}"; do
  # shellcheck disable=SC2086
  read -r med mn mx cnt <<<"$(stats 3 ${VALS[$c]})"
  if ((cnt == 0)); then
    printf '%-11s %5s %10s %10s %10s %17s %10s %10s %14s  %s\n' "$c" 0 - - - - - - - "unavailable: ${FAILMSG[$c]}"
    CELL[$c]="unavailable"
    continue
  fi
  MED[$c]=$med
  added="-"
  if [[ $c == baseline ]]; then slow="1.00x"; lost_s="-"
  else
    if [[ -n $base_med ]]; then
      slow=$(slowdown "$med" "$base_med")
      added=$(per_switch "$med" "$base_med")
      CELL[$c]="$(awk -v a="$med" -v b="$base_med" 'BEGIN {printf "%.2fx", a / b}') (${added} us/switch), ${LOST[$c]} lost"
    else slow="-"; CELL[$c]="${med} us/op, ${LOST[$c]} lost"
    fi
    lost_s="${LOST[$c]}/${LOSTMAX[$c]}"
  fi
  note=$(sum_notes "${NOTES[$c]}")
  tcpu=-
  # shellcheck disable=SC2086
  [[ -n ${TCPUS[$c]} ]] && read -r tcpu _ <<<"$(stats 3 ${TCPUS[$c]})"
  ((FAILS[$c])) && note+="${note:+; }${FAILS[$c]} run(s) failed: ${FAILMSG[$c]}"
  printf '%-11s %5s %10s %10s %10s %17s %10s %10s %14s  %s\n' "$c" "$cnt" "$med" "$mn" "$mx" "$slow" "$added" "$tcpu" "$lost_s" "$note"
done

# vs CFG LABEL: tracekit's runs against CFG's of the same rounds, as
# "faster than LABEL in 8 of 11 rounds (difference, median -0.05 us/switch)"
vs() {
  local below n md
  read -r below n md <<<"$(paired "${RVALS[tracekit]}" "${RVALS[$1]}")"
  awk -v below="$below" -v n="$n" -v md="$md" -v l="$2" \
    'BEGIN {printf "faster than %s in %d of %d rounds (difference, median %+.2f us/switch)", l, below, n, md / 2}'
}

# the make bench summary: tracekit against bpftrace and perf
verdict="-"
if [[ -n ${MED[tracekit]:-} && -n ${MED[bpftrace]:-} && -n ${MED[perf]:-} ]]; then
  why=""
  awk -v a="${MED[tracekit]}" -v b="${MED[bpftrace]}" 'BEGIN {exit !(a <= b)}' ||
    why+="${why:+, }above bpftrace"
  awk -v a="${MED[tracekit]}" -v b="${MED[perf]}" 'BEGIN {exit !(a < b)}' ||
    why+="${why:+, }not below perf"
  ((LOST[tracekit] == 0)) || why+="${why:+, }${LOST[tracekit]} lost"
  if [[ -z $why ]]; then verdict=met; else verdict="missed ($why)"; fi
  verdict+="; per round: $(vs bpftrace bpftrace), $(vs perf perf)"
  if [[ -n $why ]]; then
    [[ -n ${MED[floor]:-} && -n $base_med ]] &&
      verdict+="; floor: the same samples written and not read $(per_switch "${MED[floor]}" "$base_med") us/switch"
    [[ -n ${MED[floorread]:-} && -n $base_med ]] &&
      verdict+="; written and read $(per_switch "${MED[floorread]}" "$base_med")"
    [[ -n ${MED[floorswitch]:-} && -n $base_med ]] &&
      verdict+="; read, with switch records on CPU $RECORDS_CPU $(per_switch "${MED[floorswitch]}" "$base_med"), tracekit $(vs floorswitch floorswitch)"
  fi
fi
summary_row "offcputime, perf bench sched pipe" "${CELL[tracekit]:--}" "${CELL[bpftrace]:--}" \
  "${CELL[perf]:--}" - "<= bpftrace, < perf, 0 lost" "$verdict"

echo
tracefs_report "$TRACEFS_BEFORE" "$(tracefs_state)"
exit 0
