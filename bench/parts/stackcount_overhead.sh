#!/usr/bin/env bash
# stackcount on one tracepoint: how much it slows down a syscall-heavy loop,
# against bpftrace and perf record. (The event rates tracers sustain without
# drops are bench/parts/throughput.sh's.)
#
#   bench/parts/stackcount_overhead.sh [ROUNDS]        (as root)
#
# The workload is bench/src/getppid_loop.c, compiled into the temp dir at run
# time: it makes exactly N getppid system calls from bench_getppid_loop() with
# a raw `syscall` instruction (no libc wrapper), and prints the calls made,
# the elapsed ns, ns per call, its pid and its own CPU time (getrusage).
#
# `taskset -c BENCH_CPU getppid_loop CALLS`, ns per call under each
# configuration:
#
#   baseline      nothing
#   stackcount-K  build/bin/stackcount -K t:syscalls:sys_enter_getppid
#                 (ftrace backend: instance + stacktrace trigger, raw ring)
#   stackcount    build/bin/stackcount t:syscalls:sys_enter_getppid
#                 (perf backend: user + kernel callchains)
#   bpftrace      bpftrace -e 't:syscalls:sys_enter_getppid { @[kstack] = count(); }'
#   perf          perf record -N -e syscalls:sys_enter_getppid -g -a -o TMP/perf.data
#
# interleaved over ROUNDS rounds (default 11; the order is rotated every round
# and reversed every other cycle so no configuration always follows the same
# one). Printed per configuration: median, min and max ns/call (elapsed), the
# median CPU ns/call of the loop (its user + system time: what tracing costs
# the traced process, without the time other processes of a shared machine
# take from its CPU), the cost added per call (median minus the baseline's,
# both measures), the slowdown of the median against the baseline median,
# the events lost, and the events the tracer counted against the calls the
# loop made (see "Counted" below). The verdicts of the make bench summary
# compare the added CPU ns/call: stackcount -K against bpftrace (target:
# below it), stackcount against perf record -g (target: at most perf's),
# each median against the other's; the verdict adds in how many rounds
# stackcount's run was the cheaper of the two and the median of the
# per-round differences (bench/lib.sh paired). Runs here vary by up to 30%
# from one to the next (a slow run of the VM can hit any of them), so
# with 5 rounds a difference of 5-10% between two tracers could flip
# between make bench runs; hence 11.
#
# Readiness: each tracer is started, and the loop begins only once it is
# tracing:
#   stackcount  "Hit Ctrl-C to end." printed (it prints it after enabling its
#               events) and its main thread blocked in poll/ppoll
#   bpftrace    "Attaching 1 probe..." printed, perf_event fds open, main
#               thread blocked in epoll_wait
#   perf        perf_event fds open and the main thread blocked in poll (perf
#               record enables its events before it first polls)
# then stopped with SIGINT after the loop and waited for.
#
# Lost events:
#   stackcount  "WARNING: N events lost" on stderr (absent = 0). Stacks that
#               could not be displayed and key-table drops go in the notes.
#   bpftrace    "Lost N events" (absent = 0); it aggregates in the kernel, so
#               this is normally 0. Stack-id lookup failures go in the notes.
#   perf        the lost-sample counts perf record stores (LOST_SAMPLES in
#               `perf report --stats`), else the sum of PERF_RECORD_LOST.
#
# Counted: the events the tracer reported (stackcount: the sum of its count
# lines, "    N"; bpftrace: the sum of the @[...]: N values; perf: its SAMPLE
# count) against the calls the loop made. The tracers trace every process,
# so other processes' getppid calls are counted too; "ours" is the part that
# can be attributed to the loop: stackcount's default mode (user stacks):
# stacks through bench_getppid_loop; perf: samples of the loop's pids while
# they run getppid_loop (a forked shell calls getppid before the exec). With
# nothing lost, ours must equal made (and counted >= made where ours is not
# known: stackcount -K and bpftrace keep kernel stacks only).
#
# Environment (all optional):
#   ROUNDS=11          rounds (the first argument wins)
#   CALLS=1000000      getppid calls per run
#   BENCH_CPU=0        CPU the loop is pinned to (tracers are unpinned)
#   CONFIGS="baseline stackcount-K stackcount bpftrace perf"
#                      subset / order of the configurations
#   SYSCALL=getppid    the system call of the loop and of the tracepoint (one
#                      without arguments, e.g. getpgrp, keeps the run apart
#                      from other tracers of getppid on a shared machine;
#                      the summary rows then name it)
#   STACKCOUNT=PATH    stackcount (default: build/bin/stackcount of this repo;
#                      the binary it links to is copied to the temp dir with a
#                      stackcount symlink, so a rebuild during the run does not
#                      change what is measured)
#   RESULTS=FILE       also write every run as CSV
#   SUMMARY=FILE       append the make bench summary rows (bench/lib.sh)
#   QEMU_WAIT=600      if a qemu-system process runs, wait up to this many
#                      seconds (polling every 30 s) for it to end; 0: do not
#   READY_TIMEOUT=30   seconds to wait for a tracer to be tracing
#   STOP_TIMEOUT=300   seconds to wait for a tracer to exit after SIGINT
#   TMPDIR             where the temp dir (program, tracer output, perf.data) goes
#   KEEP_TMP=1         keep the temp dir
#
# perf record gets -N (--no-buildid-cache) so that it does not copy binaries
# into ~/.debug; that only changes what perf does after it stops. The script
# leaves nothing running, removes its temp dir, and checks that tracefs
# (instances, kprobe/uprobe/dynamic events, set_event, tracing_on,
# current_tracer) is the same after the run as before. Tracefs instances
# that have the tracepoint enabled (another tracer of the same event, which
# slows every configuration) are named in the notes. With the defaults the
# script takes about 2 minutes.

set -u -o pipefail
# what the overhead benchmarks share (tracer start/readiness/stop, lost
# events, tracefs check, statistics): bench/lib.sh; the loop and stackcount's
# output: bench/getppid.sh
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=SCRIPTDIR/../getppid.sh
. "$(dirname "${BASH_SOURCE[0]}")/../getppid.sh"

case "${1:-}" in -h|--help) usage; exit 0 ;; esac

quick ROUNDS=1 CALLS=100000
ROUNDS=${1:-${ROUNDS:-11}}
CALLS=${CALLS:-1000000}
BENCH_CPU=${BENCH_CPU:-0}
CONFIGS=${CONFIGS:-"baseline stackcount-K stackcount bpftrace perf"}
STACKCOUNT=${STACKCOUNT:-$REPO/build/bin/stackcount}
RESULTS=${RESULTS:-}
BT_PROG="t:$TP { @[kstack] = count(); }"

posint ROUNDS "$ROUNDS"; posint CALLS "$CALLS"
need_root
read -r -a CFGS <<<"$CONFIGS"
((${#CFGS[@]})) || die "CONFIGS is empty"
NCPU=$(nproc)

# --- tools -----------------------------------------------------------------
need_sc=0
for c in "${CFGS[@]}"; do
  case $c in
    baseline) ;;
    stackcount-K | stackcount) need_sc=1 ;;
    bpftrace) need_cmd bpftrace bpftrace ;;
    perf) need_cmd perf linux-perf ;;
    *) die "unknown config '$c' (baseline stackcount-K stackcount bpftrace perf)" ;;
  esac
done
if ((need_sc)); then
  [[ -x $STACKCOUNT ]] || die "$STACKCOUNT missing: run 'make -C $REPO all'"
fi
taskset -c "$BENCH_CPU" true 2>/dev/null || die "cannot pin to CPU $BENCH_CPU"
poll_syscalls

# --- temp dir, loop ----------------------------------------------------------
bench_tmpdir stackcount-overhead
loop_setup
((need_sc)) && copy_tool "$STACKCOUNT" stackcount

# --- tracers -----------------------------------------------------------------
tracer_ready() { # CFG: is $TPID tracing
  case $1 in
    stackcount-K | stackcount)
      # printed to stdout once its events are enabled; the ftrace backend
      # has no perf_event fds (it polls trace_pipe_raw)
      grep -q 'Hit Ctrl-C to end\.' "$TMP/tracer.out" 2>/dev/null &&
        in_list "$(main_syscall "$TPID")" "$POLL_NRS" ;;
    perf) ready_perf ;;
    bpftrace) ready_bpftrace ;;
  esac
}

start_tracer() { # cfg -> TPID
  local cfg=$1
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $cfg in
    stackcount-K) "$TMP/stackcount" -K "t:$TP" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    stackcount) "$TMP/stackcount" "t:$TP" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace) bpftrace -e "$BT_PROG" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) perf record -N -e "$TP" -g -a -o "$TMP/perf.data" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
  [[ $cfg == stackcount* ]] && SC_PIDS+=("$TPID")
}

# lost_events CFG -> "LOST<TAB>NOTES" (after the tracer exited)
lost_events() {
  case $1 in
    stackcount-K | stackcount) sc_lost ;;
    bpftrace) lost_bpftrace ;;
    perf) lost_perf "$PERF_STATS" ;;
  esac
}

# counted_events CFG PIDS... -> "COUNTED OURS" (OURS is - when it cannot be told)
counted_events() {
  local cfg=$1; shift
  case $cfg in
    stackcount-K) sc_counted 0 ;;
    stackcount) sc_counted 1 ;;
    bpftrace)
      awk '/^\]: [0-9]+$/ {sub(/^\]: /, ""); s += $0} END {print s + 0, "-"}' "$TMP/tracer.out"
      ;;
    perf)
      local ours
      # the loop's pids, once they exec'ed getppid_loop (before, the forked
      # shell and taskset may call getppid themselves)
      ours=$(perf script -i "$TMP/perf.data" -F comm,pid 2>/dev/null |
        awk -v pids=" $* " '$1 == "getppid_loop" && index(pids, " " $2 " ") {n++} END {print n + 0}')
      echo "$(perf_samples "$PERF_STATS") $ours"
      ;;
  esac
}

# traced_run CFG: start CFG (unless baseline), run the loop, stop the tracer,
# collect. Sets STATUS ok|failed, MADE NSPC CPUPC ACH, LOST NOTES, COUNTED
# OURS, ERRMSG.
traced_run() {
  local cfg=$1
  STATUS=ok LOST="" NOTES="" COUNTED="" OURS="" ERRMSG="" PERF_STATS=""
  MADE="" NSPC="" CPUPC=""
  if [[ $cfg == baseline ]]; then
    run_loop 1 "$CALLS" 0
  else
    if ! run_traced "$cfg" "the loop" run_loop 1 "$CALLS" 0; then
      STATUS=failed ERRMSG=$TRACER_ERR
    else
      [[ $cfg == perf ]] && PERF_STATS=$(perf_stats)
      IFS=$'\t' read -r LOST NOTES < <(lost_events "$cfg")
      # shellcheck disable=SC2086  # LPIDS: a list of pids
      read -r COUNTED OURS < <(counted_events "$cfg" $LPIDS)
    fi
    rm -f "$TMP/perf.data" "$TMP/perf.data.old"
  fi
  [[ -n $MADE ]] || STATUS=failed
}

# --- run ---------------------------------------------------------------------------
run_start "stackcount overhead: $TP, loop on CPU $BENCH_CPU, $NCPU CPUs, $(uname -r)" \
  "round,config,ns_per_call,cpu_ns_per_call,made,counted,ours,lost,status"

# warm-up (discarded): page cache, the loop binary, the tracer binaries
run_loop 1 "$CALLS" 0

declare -A VALS CVALS RCVALS LOSTS LOSTMAX NOTESA FAILS FAILMSG MADES COUNTEDS OURSS
OTHERS=""
log "overhead: $ROUNDS rounds of $CALLS calls; configs: ${CFGS[*]}"
for c in "${CFGS[@]}"; do
  VALS[$c]="" CVALS[$c]="" RCVALS[$c]="" LOSTS[$c]=0 LOSTMAX[$c]=0 NOTESA[$c]="" FAILS[$c]=0 FAILMSG[$c]=""
  MADES[$c]=0 COUNTEDS[$c]=0 OURSS[$c]=-
done
for ((r = 1; r <= ROUNDS; r++)); do
  round_order "$r" "${CFGS[@]}"
  log "round $r/$ROUNDS: ${ORDER[*]}"
  for cfg in "${ORDER[@]}"; do
    o=$(other_tracers)
    [[ -n $o && $cfg == baseline ]] && OTHERS+="$o "
    traced_run "$cfg"
    if [[ $STATUS == ok ]]; then
      VALS[$cfg]+="$NSPC " CVALS[$cfg]+="$CPUPC " RCVALS[$cfg]+="$r:$CPUPC "
      if [[ $cfg != baseline ]]; then
        LOSTS[$cfg]=$((LOSTS[$cfg] + LOST))
        ((LOST > LOSTMAX[$cfg])) && LOSTMAX[$cfg]=$LOST
        [[ -n $NOTES ]] && NOTESA[$cfg]+="$NOTES;"
        MADES[$cfg]=$((MADES[$cfg] + MADE))
        COUNTEDS[$cfg]=$((COUNTEDS[$cfg] + COUNTED))
        [[ $OURS != - ]] && OURSS[$cfg]=$(( ${OURSS[$cfg]/-/0} + OURS ))
      fi
    else
      FAILS[$cfg]=$((FAILS[$cfg] + 1))
      [[ -n $ERRMSG ]] && FAILMSG[$cfg]=$ERRMSG
    fi
    log "  $(printf '%-12s %8s ns/call %8s cpu  lost %-7s counted %-8s ours %-8s %s %s' "$cfg" "${NSPC:--}" \
      "${CPUPC:--}" "${LOST:--}" "${COUNTED:--}" "${OURS:--}" "$STATUS" "$NOTES")"
    csv "$r" "$cfg" "$NSPC" "$CPUPC" "$MADE" "$COUNTED" "$OURS" "$LOST" "$STATUS"
  done
done

load_end
TRACEFS_AFTER=$(tracefs_state)

# --- summary -------------------------------------------------------------------
echo
echo "stackcount on t:$TP; loop pinned to CPU $BENCH_CPU, tracers unpinned; $NCPU CPUs, kernel $(uname -r)"
load_summary
[[ -n $QEMU_NOTE ]] && echo "note: $QEMU_NOTE"
OTHERS=$(tr ' ' '\n' <<<"$OTHERS" | sort -u | tr '\n' ' ')
[[ -n ${OTHERS// /} ]] &&
  echo "note: other tracers had $TP enabled during baseline runs (${OTHERS% }): every configuration pays for them"

base_med="" base_cpu=""
declare -A CMED
# VALS[...] are space-separated lists: split on purpose
# shellcheck disable=SC2086
in_list baseline "${CFGS[*]}" && base_med=$(median 1 ${VALS[baseline]}) && base_cpu=$(median 1 ${CVALS[baseline]})
echo
echo "$CALLS $SYSCALL calls per run, $ROUNDS rounds, interleaved (ns per call: elapsed; cpu = the loop's own CPU time)"
echo
fmt='%-12s %4s %8s %8s %8s %8s %8s %8s %15s %14s %10s %10s %10s  %s\n'
# shellcheck disable=SC2059  # fmt: the table's format
printf "$fmt" config runs median min max "+ns/call" "cpu" "+cpu" "slowdown" "lost sum/max" made counted ours notes
for c in "${CFGS[@]}"; do
  # shellcheck disable=SC2086
  read -r med mn mx cnt <<<"$(stats 1 ${VALS[$c]})"
  if ((cnt == 0)); then
    # shellcheck disable=SC2059
    printf "$fmt" "$c" 0 - - - - - - - - - - - "unavailable: ${FAILMSG[$c]}"
    continue
  fi
  # shellcheck disable=SC2086
  cmed=$(median 1 ${CVALS[$c]})
  CMED[$c]=$cmed
  if [[ $c == baseline ]]; then slow="1.00x" add=- cadd=- lost_s="-" md=- ct=- ou=-
  else
    if [[ -n $base_med ]]; then
      slow=$(slowdown "$med" "$base_med")
      add=$(awk -v a="$med" -v b="$base_med" 'BEGIN {printf "%+.0f", a - b}')
      cadd=$(awk -v a="$cmed" -v b="$base_cpu" 'BEGIN {printf "%+.0f", a - b}')
    else slow="-" add=- cadd=-; fi
    lost_s="${LOSTS[$c]}/${LOSTMAX[$c]}" md=${MADES[$c]} ct=${COUNTEDS[$c]} ou=${OURSS[$c]}
  fi
  note=$(sum_notes "${NOTESA[$c]}")
  ((FAILS[$c])) && note+="${note:+; }${FAILS[$c]} run(s) failed: ${FAILMSG[$c]}"
  # shellcheck disable=SC2059
  printf "$fmt" "$c" "$cnt" "$med" "$mn" "$mx" "$add" "$cmed" "$cadd" "$slow" "$lost_s" "$md" "$ct" "$ou" "$note"
done
echo
echo "made/counted/ours: sums over the runs. counted includes other processes' $SYSCALL calls;"
echo "ours (where it can be told) is what came from the loop: ours = made when nothing was lost."
echo "+ns/call, +cpu: median minus the baseline median, the cost the tracer adds to each traced call"
echo "(elapsed, and in the loop's own CPU time)."

# --- make bench summary ----------------------------------------------------------
# cell CFG -> "2.60x (+1.3 us/call)": the CPU-time slowdown and added cost
cell() {
  [[ -n ${CMED[$1]:-} && -n $base_cpu ]] || { echo "-"; return; }
  awk -v a="${CMED[$1]}" -v b="$base_cpu" 'BEGIN {printf "%.2fx (%+.2f us/call)", a / b, (a - b) / 1000}'
}
# compare A B OP: the verdict of A's added CPU ns against B's (OP lt or le),
# "missed" if A lost events; then the rounds in which A was the cheaper
# and the median of the per-round differences
compare() {
  local a=$1 b=$2 op=$3 below n md
  [[ -n ${CMED[$a]:-} && -n ${CMED[$b]:-} && -n $base_cpu ]] || { echo "-"; return; }
  ((LOSTS[$a] > 0)) && { echo "missed ${LOSTS[$a]} events lost"; return; }
  read -r below n md <<<"$(paired "${RCVALS[$a]}" "${RCVALS[$b]}")"
  awk -v a="${CMED[$a]}" -v b="${CMED[$b]}" -v base="$base_cpu" -v op="$op" \
    -v below="$below" -v n="$n" -v md="$md" -v peer="${4:-$b}" 'BEGIN {
    da = a - base; db = b - base
    ok = (op == "lt") ? da < db : da <= db
    if (ok) printf "met"; else printf "missed +%.0f ns/call over", da - db
    printf " (cheaper than %s in %d of %d rounds; per-round difference, median %+.0f ns/call)\n", peer, below, n, md }'
}
if in_list stackcount-K "${CFGS[*]}" || in_list stackcount "${CFGS[*]}"; then
  bt=- pf=-
  in_list bpftrace "${CFGS[*]}" && bt=$(cell bpftrace)
  in_list perf "${CFGS[*]}" && pf=$(cell perf)
  in_list stackcount-K "${CFGS[*]}" &&
    summary_row "stackcount -K, $SYSCALL loop" "$(cell stackcount-K)" "$bt" - - "< bpftrace" \
      "$(compare stackcount-K bpftrace lt bpftrace)"
  in_list stackcount "${CFGS[*]}" &&
    summary_row "stackcount user+kernel, $SYSCALL loop" "$(cell stackcount)" - "$pf" - "<= perf" \
      "$(compare stackcount perf le "perf -g")"
fi

echo
tracefs_report "$TRACEFS_BEFORE" "$TRACEFS_AFTER"
instances_report
exit 0
