#!/usr/bin/env bash
# The highest event rate tracers stream from one tracepoint without drops,
# with and without stacks, tracekit against perf record at the same rates,
# and the tracers' own CPU per million events.
#
#   bench/parts/throughput.sh [REPS]        (as root)
#
# The workload is bench/src/getppid_loop.c (see bench/parts/stackcount_overhead.sh),
# compiled into the temp dir: getppid system calls from bench_getppid_loop()
# with a raw `syscall` instruction, paced or not. Traced event:
# syscalls:sys_enter_getppid. Configurations (all stream every event to user
# space; none aggregates in the kernel):
#
#   without stacks
#     tpoint        build/bin/tpoint syscalls:sys_enter_getppid > FILE
#                   (private instance, raw per-CPU ring, every event decoded
#                   and printed as ftrace's text: the tracekit tool that
#                   streams events without stacks)
#     perf          perf record -N -e syscalls:sys_enter_getppid -a -o TMP/perf.data
#   with stacks
#     stackcount    build/bin/stackcount t:syscalls:sys_enter_getppid
#                   (perf backend: user + kernel callchains, every sample read
#                   and counted by stack in user space)
#     stackcount-K  build/bin/stackcount -K t:syscalls:sys_enter_getppid
#                   (ftrace backend: stacktrace trigger, raw ring, kernel stacks)
#     perf-g        perf record -N -e syscalls:sys_enter_getppid -g -a -o TMP/perf.data
#
# at each level of RATES:
#   a number R   one producer on BENCH_CPU paced at R calls/s for RATE_SECS
#   max          one producer on BENCH_CPU, unpaced, MAX_CALLS calls
#   maxK         K unpaced producers, MAX_CALLS calls each, pinned to K CPUs
#                (BENCH_CPU and the next ones; with K = number of CPUs the
#                tracer has to share a CPU with a producer)
# REPS times each, the configurations interleaved (rotated each rep, reversed
# every other cycle). The tracers are not pinned. Tracing slows each call, so
# a paced level may fall short of its target, and the max levels measure what
# the producers reach under each tracer.
#
# Printed per configuration and level: the rate achieved (calls made /
# elapsed of the slowest producer; median and min over the reps), the events
# lost, made / counted, the tracer's CPU (user + system, from
# /proc/PID/stat, from the moment it is tracing until it has read the last
# event: startup and the final report are left out) per million events it
# read, and whether the level was sustained: nothing lost and everything
# counted in every rep. Then, per configuration, the highest rate sustained
# (the best median rate of the levels sustained before the first level, in
# the order given, that was not) and its CPU per million events over all
# runs.
#
# Readiness and lost events as in bench/parts/stackcount_overhead.sh; tpoint is
# ready once it printed "Tracing ..." and its main thread blocks in poll, and
# reports its losses as "WARNING: N events lost" (the instance's per-CPU
# "dropped events"). Counted: tpoint's lines of the event; stackcount's
# counts; perf's SAMPLE records (perf report --stats). The tracers see every
# process's calls: counted >= made is required with nothing lost (and
# stackcount's stacks through bench_getppid_loop, "ours", must equal made).
#
# Environment (all optional):
#   REPS=2             runs per configuration and level (the first argument wins)
#   CONFIGS="tpoint perf stackcount stackcount-K perf-g"
#   RATES="100000 250000 500000 1000000 2000000 max max2"
#   RATE_SECS=1        seconds per paced run
#   MAX_CALLS=500000   calls per producer at the max levels
#   BENCH_CPU=0        CPU of the (first) producer
#   SYSCALL=getppid    the system call of the loop and of the tracepoint (see
#                      bench/getppid.sh)
#   TRACER_FIFO=N      run the tracekit tools as SCHED_FIFO priority N (chrt)
#   TPOINT, STACKCOUNT the tools (default: build/bin/ of this repo; copied to
#                      the temp dir before the run)
#   RESULTS=FILE       also write every run as CSV
#   SUMMARY=FILE       append the make bench summary rows (bench/lib.sh)
#   QEMU_WAIT, READY_TIMEOUT, STOP_TIMEOUT, TMPDIR, KEEP_TMP as in
#   bench/parts/stackcount_overhead.sh
#
# The script leaves nothing running, removes its temp dir (tpoint's output
# and perf.data after each run), and checks that tracefs is the same after
# the run as before. With the defaults it takes about 2.5-3 minutes.

set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck source=SCRIPTDIR/../getppid.sh
. "$(dirname "${BASH_SOURCE[0]}")/../getppid.sh"

case "${1:-}" in -h|--help) usage; exit 0 ;; esac

quick REPS=1 "RATES=100000 max" MAX_CALLS=100000
REPS=${1:-${REPS:-2}}
CONFIGS=${CONFIGS:-"tpoint perf stackcount stackcount-K perf-g"}
RATES=${RATES:-"100000 250000 500000 1000000 2000000 max max2"}
RATE_SECS=${RATE_SECS:-1}
MAX_CALLS=${MAX_CALLS:-500000}
BENCH_CPU=${BENCH_CPU:-0}
TRACER_FIFO=${TRACER_FIFO:-}
TPOINT=${TPOINT:-$REPO/build/bin/tpoint}
STACKCOUNT=${STACKCOUNT:-$REPO/build/bin/stackcount}
RESULTS=${RESULTS:-}

posint REPS "$REPS"; posint RATE_SECS "$RATE_SECS"; posint MAX_CALLS "$MAX_CALLS"
[[ -z $TRACER_FIFO ]] || [[ $TRACER_FIFO =~ ^[1-9][0-9]?$ ]] || die "TRACER_FIFO must be 1-99 (got '$TRACER_FIFO')"
need_root
read -r -a CFGS <<<"$CONFIGS"
read -r -a LEVELS <<<"$RATES"
((${#CFGS[@]})) || die "CONFIGS is empty"
((${#LEVELS[@]})) || die "RATES is empty"
NCPU=$(nproc)
for l in "${LEVELS[@]}"; do
  [[ $l =~ ^[1-9][0-9]*$ || $l == max || $l =~ ^max[1-9][0-9]*$ ]] ||
    die "RATES: '$l' is not a rate, max or maxK"
  [[ $l =~ ^max([0-9]+)$ ]] && ((BASH_REMATCH[1] > NCPU)) && die "RATES: $l needs ${BASH_REMATCH[1]} CPUs, there are $NCPU"
done
[[ -z $(printf '%s\n' "${LEVELS[@]}" | sort | uniq -d) ]] || die "RATES: a level is repeated (use REPS)"

need_tp=0 need_sc=0
for c in "${CFGS[@]}"; do
  case $c in
    tpoint) need_tp=1 ;;
    stackcount | stackcount-K) need_sc=1 ;;
    perf | perf-g) need_cmd perf linux-perf ;;
    *) die "unknown config '$c' (tpoint perf stackcount stackcount-K perf-g)" ;;
  esac
done
((need_tp)) && { [[ -x $TPOINT ]] || die "$TPOINT missing: run 'make -C $REPO all'"; }
((need_sc)) && { [[ -x $STACKCOUNT ]] || die "$STACKCOUNT missing: run 'make -C $REPO all'"; }
[[ -n $TRACER_FIFO ]] && need_cmd chrt util-linux
taskset -c "$BENCH_CPU" true 2>/dev/null || die "cannot pin to CPU $BENCH_CPU"
poll_syscalls

bench_tmpdir throughput
loop_setup
((need_tp)) && copy_tool "$TPOINT" tpoint
((need_sc)) && copy_tool "$STACKCOUNT" stackcount
FIFO=()
[[ -n $TRACER_FIFO ]] && FIFO=(chrt -f "$TRACER_FIFO")

# --- tracers -----------------------------------------------------------------
tracer_ready() { # CFG: is $TPID tracing
  case $1 in
    tpoint) grep -q '^Tracing ' "$TMP/tracer.out" 2>/dev/null && in_list "$(main_syscall "$TPID")" "$POLL_NRS" ;;
    stackcount*) grep -q 'Hit Ctrl-C to end\.' "$TMP/tracer.out" 2>/dev/null &&
      in_list "$(main_syscall "$TPID")" "$POLL_NRS" ;;
    perf*) ready_perf ;;
  esac
}

start_tracer() { # cfg -> TPID (chrt execs the tool: the pid is the tool's)
  local cfg=$1
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $cfg in
    tpoint) "${FIFO[@]}" "$TMP/tpoint" "$TP" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    stackcount) "${FIFO[@]}" "$TMP/stackcount" "t:$TP" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    stackcount-K) "${FIFO[@]}" "$TMP/stackcount" -K "t:$TP" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) perf record -N -e "$TP" -a -o "$TMP/perf.data" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf-g) perf record -N -e "$TP" -g -a -o "$TMP/perf.data" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
  [[ $cfg == stackcount* ]] && SC_PIDS+=("$TPID")
}

# shellcheck disable=SC2317  # used through run_traced
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null; } # utime + stime

# loop_then_settle NPROD CALLS RATE: run the loop, then wait (up to 5 s) until
# the tracer's CPU time stops growing (it has read what the loop made), and
# set TICKS to the CPU it used since it was ready
# shellcheck disable=SC2317  # invoked by run_traced
loop_then_settle() {
  local t0 prev now i
  t0=$(cpu_ticks "$TPID")
  run_loop "$@"
  prev=$(cpu_ticks "$TPID")
  for ((i = 0; i < 25; i++)); do
    sleep 0.2
    now=$(cpu_ticks "$TPID")
    [[ -n $now && $now == "$prev" ]] && break
    prev=$now
  done
  TICKS=$(( ${prev:-$t0} - t0 ))
}

# collect CFG -> LOST NOTES COUNTED OURS (after the tracer exited)
collect() {
  local stats
  case $1 in
    tpoint)
      LOST=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$TMP/tracer.err") NOTES=""
      read -r COUNTED OURS < <(awk -v ev=" sys_$SYSCALL(" -v pids=" $LPIDS " 'index($0, ev) {
          n++; t = $1; sub(/.*-/, "", t); if (index(pids, " " t " ")) o++ }
        END {print n + 0, o + 0}' "$TMP/tracer.out")
      ;;
    stackcount | stackcount-K)
      IFS=$'\t' read -r LOST NOTES < <(sc_lost)
      read -r COUNTED OURS < <(sc_counted "$([[ $1 == stackcount ]] && echo 1)")
      ;;
    perf | perf-g)
      stats=$(perf_stats)
      IFS=$'\t' read -r LOST NOTES < <(lost_perf "$stats")
      COUNTED=$(perf_samples "$stats") OURS=-
      ;;
  esac
}

# traced_run CFG NPROD CALLS RATE: sets STATUS ok|failed, MADE ACH, TICKS,
# LOST NOTES COUNTED OURS, ERRMSG
traced_run() {
  local cfg=$1
  STATUS=ok LOST="" NOTES="" COUNTED="" OURS="" ERRMSG="" MADE="" ACH="" TICKS=""
  if ! run_traced "$cfg" "the loop" loop_then_settle "$2" "$3" "$4"; then
    STATUS=failed ERRMSG=$TRACER_ERR
  else
    collect "$cfg"
  fi
  rm -f "$TMP/perf.data" "$TMP/perf.data.old" "$TMP/tracer.out"
  [[ -n $MADE ]] || STATUS=failed
}

# --- run ---------------------------------------------------------------------------
run_start "throughput: $TP, levels ${LEVELS[*]}, $REPS reps; configs ${CFGS[*]}; $NCPU CPUs, $(uname -r)" \
  "rep,config,level,rate,made,counted,ours,lost,cpu_ticks,status"
run_loop 1 "$MAX_CALLS" 0 # warm-up (discarded)

declare -A TACH TLOST TLOSTMAX TMADE TCOUNTED TOURS TVERD TRUNS TNOTES TFAIL CTICKS CEVENTS
for c in "${CFGS[@]}"; do CTICKS[$c]=0 CEVENTS[$c]=0; done
OTHERS=""
li=0
for lvl in "${LEVELS[@]}"; do
  if [[ $lvl == max ]]; then np=1 calls=$MAX_CALLS rate=0
  elif [[ $lvl =~ ^max([0-9]+)$ ]]; then np=${BASH_REMATCH[1]} calls=$MAX_CALLS rate=0
  else np=1 calls=$((lvl * RATE_SECS)) rate=$lvl; fi
  for c in "${CFGS[@]}"; do
    k="$c|$lvl"
    TACH[$k]="" TLOST[$k]=0 TLOSTMAX[$k]=0 TMADE[$k]=0 TCOUNTED[$k]=0 TOURS[$k]=- TVERD[$k]=ok
    TRUNS[$k]=0 TNOTES[$k]="" TFAIL[$k]=""
  done
  for ((rep = 1; rep <= REPS; rep++)); do
    round_order $((li * REPS + rep)) "${CFGS[@]}"
    for c in "${ORDER[@]}"; do
      k="$c|$lvl"
      o=$(other_tracers); [[ -n $o ]] && OTHERS+="$o "
      traced_run "$c" "$np" "$calls" "$rate"
      if [[ $STATUS == ok ]]; then
        TRUNS[$k]=$((TRUNS[$k] + 1))
        TACH[$k]+="$ACH "
        TLOST[$k]=$((TLOST[$k] + LOST))
        ((LOST > TLOSTMAX[$k])) && TLOSTMAX[$k]=$LOST
        TMADE[$k]=$((TMADE[$k] + MADE))
        TCOUNTED[$k]=$((TCOUNTED[$k] + COUNTED))
        [[ $OURS != - ]] && TOURS[$k]=$(( ${TOURS[$k]/-/0} + OURS ))
        CTICKS[$c]=$((CTICKS[$c] + TICKS)) CEVENTS[$c]=$((CEVENTS[$c] + COUNTED))
        v=$(verdict "$MADE" "$COUNTED" "$OURS" "$LOST")
        [[ $v != ok ]] && TVERD[$k]=$v
        [[ -n $NOTES ]] && TNOTES[$k]+="$NOTES;"
      else
        TVERD[$k]=failed TFAIL[$k]=$ERRMSG
      fi
      log "  $(printf '%-12s %-8s rep %d: %9s ev/s  lost %-7s made %-8s counted %-8s ours %-8s cpu %4s ticks %s' \
        "$c" "$lvl" "$rep" "${ACH:--}" "${LOST:--}" "${MADE:--}" "${COUNTED:--}" "${OURS:--}" "${TICKS:--}" "$STATUS")"
      csv "$rep" "$c" "$lvl" "$ACH" "$MADE" "$COUNTED" "$OURS" "$LOST" "$TICKS" "$STATUS"
    done
  done
  li=$((li + 1))
done

load_end
TRACEFS_AFTER=$(tracefs_state)

# --- tables ----------------------------------------------------------------------
HZ=$(getconf CLK_TCK)
# cpu_per_m CFG -> ms of tracer CPU per million events read, over all its runs
cpu_per_m() {
  awk -v t="${CTICKS[$1]}" -v e="${CEVENTS[$1]}" -v hz="$HZ" \
    'BEGIN {if (e > 0) printf "%.0f", t * 1000 / hz / (e / 1e6); else print "-"}'
}
echo
echo "Throughput on t:$TP: every event streamed to user space; $REPS reps per level; $NCPU CPUs, kernel $(uname -r)"
echo "(level: paced calls/s for ${RATE_SECS}s on CPU $BENCH_CPU, or maxK = K unpaced producers x $MAX_CALLS calls)"
[[ -n $TRACER_FIFO ]] && echo "tracekit tools run as SCHED_FIFO $TRACER_FIFO"
load_summary
[[ -n $QEMU_NOTE ]] && echo "note: $QEMU_NOTE"
OTHERS=$(tr ' ' '\n' <<<"$OTHERS" | sort -u | tr '\n' ' ')
[[ -n ${OTHERS// /} ]] && echo "note: other tracers had $TP enabled during the runs (${OTHERS% })"
echo
fmt='%-12s %-8s %12s %12s %14s %12s %12s %12s  %s\n'
# shellcheck disable=SC2059  # fmt: the table's format
printf "$fmt" config level "achieved/s" "min/s" "lost sum/max" made counted ours verdict
declare -A BEST BESTL
for c in "${CFGS[@]}"; do
  best="" bestl="" stop=0
  for lvl in "${LEVELS[@]}"; do
    k="$c|$lvl"
    # shellcheck disable=SC2086  # TACH: a list
    read -r med mn _ _ <<<"$(stats 1 ${TACH[$k]})"
    [[ $med != - ]] && med=${med%.*} mn=${mn%.*}
    verd=${TVERD[$k]}
    ((TRUNS[$k] < REPS)) && verd=failed
    [[ $verd == ok ]] && verd="sustained"
    note=$(sum_notes "${TNOTES[$k]}")
    [[ -n ${TFAIL[$k]} ]] && note+="${note:+; }${TFAIL[$k]}"
    # shellcheck disable=SC2059
    printf "$fmt" "$c" "$lvl" "$med" "$mn" "${TLOST[$k]}/${TLOSTMAX[$k]}" "${TMADE[$k]}" \
      "${TCOUNTED[$k]}" "${TOURS[$k]}" "$verd${note:+ ($note)}"
    # the levels in the order given, up to the first one not sustained
    if [[ $verd == sustained && $med != - && $stop == 0 ]]; then
      { [[ -z $best ]] || ((med > best)); } && best=$med bestl=$lvl
    else
      stop=1
    fi
  done
  BEST[$c]=$best BESTL[$c]=$bestl
done
echo
printf '%-12s %22s %10s %20s\n' config "highest sustained/s" level "CPU ms per M events"
for c in "${CFGS[@]}"; do
  printf '%-12s %22s %10s %20s\n' "$c" "${BEST[$c]:-none}" "${BESTL[$c]:--}" "$(cpu_per_m "$c")"
done
echo
echo "achieved: calls made / elapsed (median and min over reps); a paced level falls short of its target"
echo "when tracing makes each call slower than 1/rate. sustained: nothing lost and counted >= made"
echo "(stackcount: the stacks through $LOOP_FN = made) in every rep. highest sustained: the best median"
echo "rate of the levels sustained before the first level (in the order given) that was not. CPU per M"
echo "events: the tracer's user + system time while tracing, over every run, per million events it read."

# --- make bench summary ----------------------------------------------------------
rate_cell() { # CFG -> "1.23 M/s" or "none"
  [[ -n ${BEST[$1]:-} ]] || { echo "none sustained"; return; }
  awk -v r="${BEST[$1]}" 'BEGIN {printf "%.2f M/s", r / 1e6}'
}
# tput_row LABEL TK_CFG PERF_CFG [EXTRA_CFG]
tput_row() {
  local label=$1 a=$2 b=$3 x=${4:-} tk pf verd
  in_list "$a" "${CFGS[*]}" || return 0
  tk=$(rate_cell "$a")
  [[ -n $x ]] && in_list "$x" "${CFGS[*]}" && tk+=" ($x $(rate_cell "$x"))"
  pf=-; verd=-
  if in_list "$b" "${CFGS[*]}"; then
    pf=$(rate_cell "$b")
    if [[ -z ${BEST[$a]:-} ]]; then verd="missed none sustained"
    elif [[ -z ${BEST[$b]:-} ]] || ((BEST[$a] >= BEST[$b])); then verd=met
    else verd="missed $(awk -v a="${BEST[$a]}" -v b="${BEST[$b]}" 'BEGIN {printf "%.0f%% of perf", a * 100 / b}')"
    fi
  fi
  summary_row "$label" "$tk" - "$pf" - ">= perf" "$verd"
}
tput_row "throughput, no stacks" tpoint perf
tput_row "throughput, with stacks" stackcount perf-g stackcount-K
tk="" pf=""
for c in tpoint stackcount stackcount-K; do
  in_list "$c" "${CFGS[*]}" && tk+="${tk:+, }$c $(cpu_per_m "$c") ms"
done
for c in perf perf-g; do
  in_list "$c" "${CFGS[*]}" && pf+="${pf:+, }$c $(cpu_per_m "$c") ms"
done
[[ -n $tk$pf ]] && summary_row "reader CPU per M events" "${tk:--}" - "${pf:--}" - - -

echo
tracefs_report "$TRACEFS_BEFORE" "$TRACEFS_AFTER"
instances_report
exit 0
