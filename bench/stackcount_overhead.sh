#!/usr/bin/env bash
# stackcount on one tracepoint: events/s it sustains without drops, and how
# much it slows down a syscall-heavy loop, against bpftrace and perf record.
#
#   bench/stackcount_overhead.sh [ROUNDS]        (as root)
#
# The workload is a small C program, compiled into the temp dir at run time:
# it makes exactly N getppid system calls from bench_getppid_loop() with a raw
# `syscall` instruction (no libc wrapper), optionally paced at R calls/s (busy
# wait on the vDSO clock, no other system call), and prints the calls made,
# the elapsed ns, ns per call and its pid.
#
# Part 1, overhead: `taskset -c BENCH_CPU getppid_loop CALLS` (unpaced), ns
# per call under each configuration:
#
#   baseline      nothing
#   stackcount-K  build/bin/stackcount -K t:syscalls:sys_enter_getppid
#                 (ftrace backend: instance + stacktrace trigger, raw ring)
#   stackcount    build/bin/stackcount t:syscalls:sys_enter_getppid
#                 (perf backend: user + kernel callchains)
#   bpftrace      bpftrace -e 't:syscalls:sys_enter_getppid { @[kstack] = count(); }'
#   perf          perf record -N -e syscalls:sys_enter_getppid -g -a -o TMP/perf.data
#
# interleaved over ROUNDS rounds (default 5; the order is rotated every round
# and reversed every other cycle so no configuration always follows the same
# one). Printed per configuration: median, min and max ns/call, the slowdown
# of the median against the baseline median, the events lost, and the events
# the tracer counted against the calls the loop made (see "Counted" below).
#
# Part 2, throughput: stackcount (both backends, interleaved per level) while
# the loop runs at each level of RATES:
#   a number R   one producer on BENCH_CPU paced at R calls/s for RATE_SECS
#   max          one producer on BENCH_CPU, unpaced, MAX_CALLS calls
#   maxK         K unpaced producers, MAX_CALLS calls each, pinned to K CPUs
#                (BENCH_CPU and the next ones; with K = number of CPUs the
#                tracer has to share a CPU with a producer)
# RATE_REPS times each. Printed per backend and level: the event rate achieved
# (calls made / elapsed; tracing slows the producer, so a paced level may not
# reach its target), the events lost, counted vs made, and whether the level
# was sustained (no loss reported and nothing missing in any rep). Then the
# highest achieved rate sustained by each backend.
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
#   ROUNDS=5           overhead rounds (the first argument wins)
#   CALLS=1000000      getppid calls per overhead run
#   BENCH_CPU=0        CPU the loop is pinned to (tracers are unpinned)
#   CONFIGS="baseline stackcount-K stackcount bpftrace perf"
#                      subset / order of the overhead configurations
#   PARTS="overhead throughput"   which parts to run
#   RATES="100000 250000 500000 750000 1000000 max max2"   throughput levels
#   RATE_SECS=2        seconds per paced throughput run
#   MAX_CALLS=2000000  calls per producer at the max levels
#   RATE_REPS=3        runs per backend and level
#   STACKCOUNT=PATH    stackcount (default: build/bin/stackcount of this repo;
#                      the binary it links to is copied to the temp dir with a
#                      stackcount symlink, so a rebuild during the run does not
#                      change what is measured)
#   RESULTS=FILE       also write every run as CSV
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
# current_tracer) is the same after the run as before.

set -u -o pipefail
# what the overhead benchmarks share (tracer start/readiness/stop, lost
# events, tracefs check, statistics): bench/lib.sh
# shellcheck source=SCRIPTDIR/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

case "${1:-}" in -h|--help) usage; exit 0 ;; esac

ROUNDS=${1:-${ROUNDS:-5}}
CALLS=${CALLS:-1000000}
BENCH_CPU=${BENCH_CPU:-0}
CONFIGS=${CONFIGS:-"baseline stackcount-K stackcount bpftrace perf"}
PARTS=${PARTS:-"overhead throughput"}
RATES=${RATES:-"100000 250000 500000 750000 1000000 max max2"}
RATE_SECS=${RATE_SECS:-2}
MAX_CALLS=${MAX_CALLS:-2000000}
RATE_REPS=${RATE_REPS:-3}
STACKCOUNT=${STACKCOUNT:-$REPO/build/bin/stackcount}
RESULTS=${RESULTS:-}
QEMU_WAIT=${QEMU_WAIT:-600}
TP=syscalls:sys_enter_getppid
BT_PROG="t:$TP { @[kstack] = count(); }"
LOOP_FN=bench_getppid_loop

posint ROUNDS "$ROUNDS"; posint CALLS "$CALLS"; posint RATE_SECS "$RATE_SECS"
posint MAX_CALLS "$MAX_CALLS"; posint RATE_REPS "$RATE_REPS"
[[ $BENCH_CPU =~ ^[0-9]+$ ]] || die "BENCH_CPU must be a CPU number (got '$BENCH_CPU')"
[[ $QEMU_WAIT =~ ^[0-9]+$ ]] || die "QEMU_WAIT must be a number of seconds (got '$QEMU_WAIT')"
need_root
read -r -a CFGS <<<"$CONFIGS"
read -r -a PARTL <<<"$PARTS"
read -r -a LEVELS <<<"$RATES"
for p in "${PARTL[@]}"; do
  case $p in overhead | throughput) ;; *) die "unknown part '$p' (overhead throughput)" ;; esac
done
RUN_OVH=0 RUN_TPUT=0
for p in "${PARTL[@]}"; do [[ $p == overhead ]] && RUN_OVH=1; [[ $p == throughput ]] && RUN_TPUT=1; done
((RUN_OVH + RUN_TPUT)) || die "PARTS is empty"
((RUN_OVH == 0)) || ((${#CFGS[@]})) || die "CONFIGS is empty"
NCPU=$(nproc)
for l in "${LEVELS[@]}"; do
  [[ $l =~ ^[1-9][0-9]*$ || $l == max || $l =~ ^max[1-9][0-9]*$ ]] ||
    die "RATES: '$l' is not a rate, max or maxK"
  [[ $l =~ ^max([0-9]+)$ ]] && ((BASH_REMATCH[1] > NCPU)) && die "RATES: $l needs ${BASH_REMATCH[1]} CPUs, there are $NCPU"
done
[[ -z $(printf '%s\n' "${LEVELS[@]}" | sort | uniq -d) ]] || die "RATES: a level is repeated (use RATE_REPS)"
((RUN_TPUT == 0)) || ((${#LEVELS[@]})) || die "RATES is empty"

# --- tools -----------------------------------------------------------------
need_cmd taskset util-linux
need_cmd gcc gcc
need_sc=$RUN_TPUT
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

[[ $(uname -m) == x86_64 ]] ||
  die "unsupported architecture $(uname -m): the loop uses the x86-64 syscall instruction"
poll_syscalls

# --- temp dir, cleanup -------------------------------------------------------
bench_tmpdir stackcount-overhead
BPIDS=()   # loop processes currently running (started by us)
# shellcheck disable=SC2317  # invoked from cleanup
stop_workload() {
  local p
  for p in "${BPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}

# instances / groups named after a pid that we started (tracekit_<pid>[_n])
our_instances() {
  local pids=" $* " w
  while IFS= read -r w; do
    [[ $w =~ ^tracekit_([0-9]+) && $pids == *" ${BASH_REMATCH[1]} "* ]] && echo "$w"
  done < <(find "$TRACEFS/instances" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null)
}

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

SC_PIDS=()   # every stackcount pid started (to check their tracefs instances are gone)
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
  local err=$TMP/tracer.err lost notes="" n
  case $1 in
    stackcount-K | stackcount)
      lost=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$err")
      n=$(sum_matches '^WARNING: \([0-9]*\) stack traces could not be displayed.*' "$err")
      ((n)) && notes+="stacks_missing=$n "
      n=$(sum_matches '^WARNING: \([0-9]*\) events dropped: the key table.*' "$err")
      ((n)) && notes+="key_table_dropped=$n "
      grep -q '^WARNING: kernel symbols unavailable' "$err" && notes+="no_ksyms=1 "
      printf '%s\t%s\n' "$lost" "${notes% }"
      ;;
    bpftrace) lost_bpftrace ;;
    perf) lost_perf "$PERF_STATS" ;;
  esac
}

# counted_events CFG PIDS... -> "COUNTED OURS" (OURS is - when it cannot be told)
counted_events() {
  local cfg=$1; shift
  case $cfg in
    stackcount-K | stackcount)
      # records are paragraphs: frames ("  fn"), then the count ("    N")
      awk -v RS= -v fn="$LOOP_FN" -v user="$([[ $cfg == stackcount ]] && echo 1)" '
        { n = split($0, L, "\n"); if (L[n] ~ /^    [0-9]+$/) { c = L[n] + 0; tot += c
            if (index($0, "  " fn "\n")) own += c } }
        END { print tot + 0, (user ? own + 0 : "-") }' "$TMP/tracer.out"
      ;;
    bpftrace)
      awk '/^\]: [0-9]+$/ {sub(/^\]: /, ""); s += $0} END {print s + 0, "-"}' "$TMP/tracer.out"
      ;;
    perf)
      local counted ours
      counted=$(awk '/stats:$/ {per = ($0 !~ /Aggregated/)} per && /^ *SAMPLE events:/ {s += $3; seen = 1}
                     END {print seen ? s : 0}' <<<"$PERF_STATS")
      # the loop's pids, once they exec'ed getppid_loop (before, the forked
      # shell and taskset may call getppid themselves)
      ours=$(perf script -i "$TMP/perf.data" -F comm,pid 2>/dev/null |
        awk -v pids=" $* " '$1 == "getppid_loop" && index(pids, " " $2 " ") {n++} END {print n + 0}')
      echo "$counted $ours"
      ;;
  esac
}

# run_loop NPROD CALLS RATE -> MADE (sum of calls), NSPC (ns/call of the first
# producer), ACH (calls made / longest elapsed, events/s), LPIDS; MADE empty on
# failure. No subshell: BPIDS stays visible to cleanup.
run_loop() {
  local nprod=$1 calls=$2 rate=$3 i cpu rc ok=1 maxns=0 ns
  MADE="" NSPC="" ACH="" LPIDS=""
  BPIDS=()
  for ((i = 0; i < nprod; i++)); do
    cpu=${ONLINE[(CPU_IDX + i) % ${#ONLINE[@]}]}
    taskset -c "$cpu" "$TMP/getppid_loop" "$calls" "$rate" >"$TMP/loop.$i.out" 2>&1 &
    BPIDS+=($!)
  done
  for ((i = 0; i < nprod; i++)); do
    wait "${BPIDS[i]}"; rc=$?
    ((rc == 0)) || { ok=0; log "  loop failed (rc=$rc): $(tail -n 3 "$TMP/loop.$i.out" | tr '\n' ' ')"; }
  done
  BPIDS=()
  ((ok)) || return
  local made=0 pids="" c p
  for ((i = 0; i < nprod; i++)); do
    read -r c ns p < <(awk '/^calls / {print $2, $4, $10}' "$TMP/loop.$i.out")
    [[ -n ${p:-} ]] || { log "  loop printed no result"; return; }
    made=$((made + c)); pids+="$p "; ((ns > maxns)) && maxns=$ns
    ((i == 0)) && NSPC=$(awk -v n="$ns" -v c="$c" 'BEGIN {printf "%.1f", n / c}')
  done
  MADE=$made LPIDS=${pids% }
  ACH=$(awk -v c="$made" -v n="$maxns" 'BEGIN {printf "%.0f", c * 1e9 / n}')
}

# traced_run CFG NPROD CALLS RATE: start CFG (unless baseline), run the loop,
# stop the tracer, collect. Sets STATUS ok|failed, MADE NSPC ACH, LOST NOTES,
# COUNTED OURS, ERRMSG.
traced_run() {
  local cfg=$1 nprod=$2 calls=$3 rate=$4
  STATUS=ok LOST="" NOTES="" COUNTED="" OURS="" ERRMSG="" PERF_STATS=""
  MADE="" NSPC="" ACH=""
  if [[ $cfg == baseline ]]; then
    run_loop "$nprod" "$calls" "$rate"
  else
    if ! run_traced "$cfg" "the loop" run_loop "$nprod" "$calls" "$rate"; then
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

qemu_pids() { pgrep -f '^[^ ]*qemu-system' 2>/dev/null | tr '\n' ' '; }

# verdict MADE COUNTED OURS LOST -> "ok" or what is wrong (nothing lost means
# every call of ours was counted)
verdict() {
  local made=$1 counted=$2 ours=$3 lost=$4
  if ((lost > 0)); then echo "lost"
  elif [[ $ours != - ]]; then ((ours == made)) && echo ok || echo "ours!=made"
  else ((counted >= made)) && echo ok || echo "counted<made"
  fi
}

# --- setup -----------------------------------------------------------------------
mapfile -t ONLINE < <(awk -F, '{for (i = 1; i <= NF; i++) {n = split($i, r, "-"); if (n == 1) print r[1]; else for (c = r[1]; c <= r[2]; c++) print c}}' /sys/devices/system/cpu/online)
CPU_IDX=-1
for i in "${!ONLINE[@]}"; do [[ ${ONLINE[i]} == "$BENCH_CPU" ]] && CPU_IDX=$i; done
((CPU_IDX >= 0)) || die "CPU $BENCH_CPU is not online"

cat >"$TMP/getppid_loop.c" <<'EOF'
/* getppid_loop N [RATE]: exactly N getppid system calls from
 * bench_getppid_loop() (raw syscall instruction), paced at RATE calls/s if
 * RATE > 0 (busy wait on the vDSO clock every 8 calls), then prints
 * "calls N ns ELAPSED ns_per_call X rate R pid P". */
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline __attribute__((always_inline)) long raw_getppid(void) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
  return ret;
}
static inline long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}
__attribute__((noinline)) long bench_getppid_loop(long n, double rate) {
  long sum = 0;
  if (rate <= 0) {
    for (long i = 0; i < n; i++) sum += raw_getppid();
    return sum;
  }
  long long t0 = now_ns();
  double step = 1e9 / rate;
  for (long i = 0; i < n; i++) {
    if ((i & 7) == 0)
      while (now_ns() - t0 < (long long)(i * step)) {
      }
    sum += raw_getppid();
  }
  return sum;
}
int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s N [RATE]\n", argv[0]);
    return 2;
  }
  long n = atol(argv[1]);
  double rate = argc > 2 ? atof(argv[2]) : 0;
  long long t0 = now_ns();
  long sum = bench_getppid_loop(n, rate);
  long long dt = now_ns() - t0;
  printf("calls %ld ns %lld ns_per_call %.2f rate %.0f pid %d\n", n, dt, (double)dt / n,
         n * 1e9 / dt, (int)getpid());
  return sum == 42; /* keeps the loop; getppid is never 42 here */
}
EOF
gcc -O2 -fno-omit-frame-pointer -o "$TMP/getppid_loop" "$TMP/getppid_loop.c" ||
  die "cannot compile the getppid loop"
"$TMP/getppid_loop" 10 >/dev/null || die "the getppid loop does not run"

((need_sc)) && copy_tool "$STACKCOUNT" stackcount

# other engineers' VMs make the numbers meaningless: wait for them
QEMU_NOTE=""
q=$(qemu_pids)
if [[ -n $q ]]; then
  if ((QEMU_WAIT > 0)); then
    log "qemu-system running (pids $q): waiting up to ${QEMU_WAIT}s for it to end"
    waited=0
    while [[ -n $(qemu_pids) ]] && ((waited < QEMU_WAIT)); do sleep 30; waited=$((waited + 30)); done
    q=$(qemu_pids)
    if [[ -n $q ]]; then QEMU_NOTE="qemu-system still running after ${waited}s (pids $q): numbers are noisy"
    else QEMU_NOTE="waited ${waited}s for qemu-system to end"; fi
  else
    QEMU_NOTE="qemu-system running (pids $q): numbers are noisy"
  fi
  log "$QEMU_NOTE"
fi

TRACEFS_BEFORE=$(tracefs_state)
log "stackcount overhead: $TP, loop on CPU $BENCH_CPU, $NCPU CPUs, $(uname -r)"
load_start
[[ -n $RESULTS ]] && echo "part,round,config,level,ns_per_call,rate,made,counted,ours,lost,status" >"$RESULTS"
csv() { [[ -z $RESULTS ]] || (IFS=,; echo "$*") >>"$RESULTS"; }

# warm-up (discarded): page cache, the loop binary, the tracer binaries
run_loop 1 "$CALLS" 0

# --- part 1: overhead ------------------------------------------------------------
declare -A VALS LOSTS LOSTMAX NOTESA FAILS FAILMSG MADES COUNTEDS OURSS
if ((RUN_OVH)); then
  log "overhead: $ROUNDS rounds of $CALLS calls; configs: ${CFGS[*]}"
  for c in "${CFGS[@]}"; do
    VALS[$c]="" LOSTS[$c]=0 LOSTMAX[$c]=0 NOTESA[$c]="" FAILS[$c]=0 FAILMSG[$c]=""
    MADES[$c]=0 COUNTEDS[$c]=0 OURSS[$c]=-
  done
  for ((r = 1; r <= ROUNDS; r++)); do
    round_order "$r" "${CFGS[@]}"
    log "round $r/$ROUNDS: ${ORDER[*]}"
    for cfg in "${ORDER[@]}"; do
      traced_run "$cfg" 1 "$CALLS" 0
      if [[ $STATUS == ok ]]; then
        VALS[$cfg]+="$NSPC "
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
      log "  $(printf '%-12s %8s ns/call  lost %-7s counted %-8s ours %-8s %s %s' "$cfg" "${NSPC:--}" \
        "${LOST:--}" "${COUNTED:--}" "${OURS:--}" "$STATUS" "$NOTES")"
      csv overhead "$r" "$cfg" "" "$NSPC" "$ACH" "$MADE" "$COUNTED" "$OURS" "$LOST" "$STATUS"
    done
  done
fi

# --- part 2: throughput -------------------------------------------------------------
declare -A TACH TLOST TLOSTMAX TMADE TCOUNTED TOURS TVERD TRUNS TNOTES TFAIL
TBACKENDS=(stackcount-K stackcount)
if ((RUN_TPUT)); then
  log "throughput: levels ${LEVELS[*]}, $RATE_REPS reps; backends ${TBACKENDS[*]}"
  li=0
  for lvl in "${LEVELS[@]}"; do
    if [[ $lvl == max ]]; then np=1 calls=$MAX_CALLS rate=0
    elif [[ $lvl =~ ^max([0-9]+)$ ]]; then np=${BASH_REMATCH[1]} calls=$MAX_CALLS rate=0
    else np=1 calls=$((lvl * RATE_SECS)) rate=$lvl; fi
    for b in "${TBACKENDS[@]}"; do
      k="$b|$lvl"
      TACH[$k]="" TLOST[$k]=0 TLOSTMAX[$k]=0 TMADE[$k]=0 TCOUNTED[$k]=0 TOURS[$k]=- TVERD[$k]=ok
      TRUNS[$k]=0 TNOTES[$k]="" TFAIL[$k]=""
    done
    for ((rep = 1; rep <= RATE_REPS; rep++)); do
      order=("${TBACKENDS[@]}")
      (((li + rep) % 2)) && order=("${TBACKENDS[1]}" "${TBACKENDS[0]}")
      for b in "${order[@]}"; do
        k="$b|$lvl"
        traced_run "$b" "$np" "$calls" "$rate"
        if [[ $STATUS == ok ]]; then
          TRUNS[$k]=$((TRUNS[$k] + 1))
          TACH[$k]+="$ACH "
          TLOST[$k]=$((TLOST[$k] + LOST))
          ((LOST > TLOSTMAX[$k])) && TLOSTMAX[$k]=$LOST
          TMADE[$k]=$((TMADE[$k] + MADE))
          TCOUNTED[$k]=$((TCOUNTED[$k] + COUNTED))
          [[ $OURS != - ]] && TOURS[$k]=$(( ${TOURS[$k]/-/0} + OURS ))
          v=$(verdict "$MADE" "$COUNTED" "$OURS" "$LOST")
          [[ $v != ok ]] && TVERD[$k]=$v
          [[ -n $NOTES ]] && TNOTES[$k]+="$NOTES;"
        else
          TVERD[$k]=failed TFAIL[$k]=$ERRMSG
        fi
        log "  $(printf '%-12s %-8s rep %d: %9s ev/s  lost %-7s made %-8s counted %-8s ours %-8s %s' \
          "$b" "$lvl" "$rep" "${ACH:--}" "${LOST:--}" "${MADE:--}" "${COUNTED:--}" "${OURS:--}" "$STATUS")"
        csv throughput "$rep" "$b" "$lvl" "$NSPC" "$ACH" "$MADE" "$COUNTED" "$OURS" "$LOST" "$STATUS"
      done
    done
    li=$((li + 1))
  done
fi

load_end
TRACEFS_AFTER=$(tracefs_state)
LEFT=$(our_instances "${SC_PIDS[@]}")

# --- summary -------------------------------------------------------------------
echo
echo "stackcount on t:$TP; loop pinned to CPU $BENCH_CPU, tracers unpinned; $NCPU CPUs, kernel $(uname -r)"
load_summary
[[ -n $QEMU_NOTE ]] && echo "note: $QEMU_NOTE"

if ((RUN_OVH)); then
  base_med=""
  # VALS[...] are space-separated lists: split on purpose
  # shellcheck disable=SC2086
  in_list baseline "${CFGS[*]}" && base_med=$(median 1 ${VALS[baseline]})
  echo
  echo "Overhead: $CALLS getppid calls per run, $ROUNDS rounds, interleaved (ns per call)"
  echo
  printf '%-12s %4s %8s %8s %8s %8s %15s %14s %10s %10s %10s  %s\n' config runs median min max \
    "+ns/call" "slowdown" "lost sum/max" made counted ours notes
  for c in "${CFGS[@]}"; do
    # shellcheck disable=SC2086
    read -r med mn mx cnt <<<"$(stats 1 ${VALS[$c]})"
    if ((cnt == 0)); then
      printf '%-12s %4s %8s %8s %8s %8s %15s %14s %10s %10s %10s  %s\n' "$c" 0 - - - - - - - - - \
        "unavailable: ${FAILMSG[$c]}"
      continue
    fi
    if [[ $c == baseline ]]; then slow="1.00x" add=- lost_s="-" md=- ct=- ou=-
    else
      if [[ -n $base_med ]]; then
        slow=$(slowdown "$med" "$base_med")
        add=$(awk -v a="$med" -v b="$base_med" 'BEGIN {printf "%+.0f", a - b}')
      else slow="-" add=-; fi
      lost_s="${LOSTS[$c]}/${LOSTMAX[$c]}" md=${MADES[$c]} ct=${COUNTEDS[$c]} ou=${OURSS[$c]}
    fi
    note=$(sum_notes "${NOTESA[$c]}")
    ((FAILS[$c])) && note+="${note:+; }${FAILS[$c]} run(s) failed: ${FAILMSG[$c]}"
    printf '%-12s %4s %8s %8s %8s %8s %15s %14s %10s %10s %10s  %s\n' "$c" "$cnt" "$med" "$mn" "$mx" \
      "$add" "$slow" "$lost_s" "$md" "$ct" "$ou" "$note"
  done
  echo
  echo "made/counted/ours: sums over the runs. counted includes other processes' getppid calls;"
  echo "ours (where it can be told) is what came from the loop: ours = made when nothing was lost."
  echo "+ns/call: median minus the baseline median, the cost the tracer adds to each traced call."
fi

if ((RUN_TPUT)); then
  echo
  echo "Throughput: stackcount streaming every event to user space; $RATE_REPS reps per level"
  echo "(level: paced calls/s for ${RATE_SECS}s on one CPU, or maxK = K unpaced producers x $MAX_CALLS calls)"
  echo
  printf '%-12s %-9s %12s %12s %12s %12s %12s %12s  %s\n' backend level "achieved/s" "min/s" \
    "lost sum/max" made counted ours verdict
  for b in "${TBACKENDS[@]}"; do
    best="" bestl=""
    for lvl in "${LEVELS[@]}"; do
      k="$b|$lvl"
      # shellcheck disable=SC2086
      read -r med mn _ cnt <<<"$(stats 1 ${TACH[$k]})"
      [[ $med != - ]] && med=${med%.*} mn=${mn%.*}
      verd=${TVERD[$k]}
      ((TRUNS[$k] < RATE_REPS)) && [[ $verd != failed ]] && verd=failed
      [[ $verd == ok ]] && verd="sustained"
      note=$(sum_notes "${TNOTES[$k]}")
      [[ -n ${TFAIL[$k]} ]] && note+="${note:+; }${TFAIL[$k]}"
      printf '%-12s %-9s %12s %12s %12s %12s %12s %12s  %s\n' "$b" "$lvl" "$med" "$mn" \
        "${TLOST[$k]}/${TLOSTMAX[$k]}" "${TMADE[$k]}" "${TCOUNTED[$k]}" "${TOURS[$k]}" "$verd${note:+ ($note)}"
      if [[ $verd == sustained && $mn != - ]] && { [[ -z $best ]] || ((mn > best)); }; then
        best=$mn bestl=$lvl
      fi
    done
    echo "  $b: highest rate sustained with no loss: ${best:-none} events/s${bestl:+ (level $bestl, slowest rep)}"
  done
  echo
  echo "achieved: calls made / elapsed (median and min over reps); a paced level falls short of its"
  echo "target when tracing makes each call slower than 1/rate. sustained: no loss reported and"
  echo "ours = made (user stacks) or counted >= made (kernel stacks only) in every rep."
fi

echo
tracefs_report "$TRACEFS_BEFORE" "$TRACEFS_AFTER"
if [[ -n $LEFT ]]; then
  echo "tracefs: instances of stackcount runs of this script are LEFT: ${LEFT//$'\n'/ }"
elif ((${#SC_PIDS[@]})); then
  echo "tracefs: none of the ${#SC_PIDS[@]} stackcount runs left an instance behind"
fi
exit 0
