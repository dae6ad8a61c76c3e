#!/usr/bin/env bash
# Overhead of off-CPU tracing on a context-switch-heavy microbenchmark.
#
#   bench/offcputime_overhead.sh [ROUNDS]        (as root)
#
# Runs `taskset -c 0 perf bench sched pipe -l 100000` (usecs/op) under each
# configuration:
#
#   baseline  nothing
#   tracekit  build/bin/offcputime -f                 (system-wide, output to a file)
#   bpftrace  bpftrace -e 'tracepoint:sched:sched_switch { @[kstack, ustack, comm] = count(); }'
#   perf      perf record -N -e sched:sched_switch -g -a -o TMP/perf.data
#
# interleaved over ROUNDS rounds (default 5; the order is rotated every round
# and reversed every other cycle so no configuration always follows the same
# one), and prints per configuration the median, min and max usecs/op, the
# slowdown of the median against the baseline median, and the events each
# tracer lost (ring buffer overflow).
#
# Each tracer is started, and the benchmark begins only once it is tracing:
#   tracekit  perf_event fds open and the main thread blocked in poll/ppoll
#   bpftrace  "Attaching 1 probe..." printed, perf_event fds open, main thread
#             blocked in epoll_wait
#   perf      perf_event fds open and the main thread blocked in poll (perf
#             record enables its events before it first polls)
# then stopped with SIGINT after the benchmark and waited for.
#
# Lost events:
#   tracekit  "WARNING: N scheduler events lost" on stderr (absent = 0)
#   bpftrace  "Lost N events" on stderr (absent = 0); it aggregates in the
#             kernel, so this is normally 0. Stack-id lookup failures (stack
#             map hash collisions) are counted separately in the notes.
#   perf      sum of the lost-sample counts perf record stores in
#             PERF_RECORD_LOST_SAMPLES (`perf report --stats`, per-event
#             "LOST_SAMPLES events" lines); if there are none but the file
#             has PERF_RECORD_LOST records, the sum of their "lost:" fields
#             (`perf report -D`). Both count every record the kernel could
#             not write to the ring buffers.
#
# Environment (all optional):
#   ROUNDS=5           rounds (the first argument wins)
#   LOOPS=100000       perf bench sched pipe -l
#   BENCH_CPU=0        CPU the benchmark is pinned to (tracers are unpinned)
#   CONFIGS="baseline tracekit bpftrace perf"   subset / order of configurations
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

usage() { sed -n '2,/^$/{s/^# \{0,1\}//;p}' "$0"; }
case "${1:-}" in -h|--help) usage; exit 0 ;; esac

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${1:-${ROUNDS:-5}}
LOOPS=${LOOPS:-100000}
BENCH_CPU=${BENCH_CPU:-0}
CONFIGS=${CONFIGS:-"baseline tracekit bpftrace perf"}
OFFCPUTIME=${OFFCPUTIME:-$REPO/build/bin/offcputime}
RESULTS=${RESULTS:-}
READY_TIMEOUT=${READY_TIMEOUT:-30}
STOP_TIMEOUT=${STOP_TIMEOUT:-300}
BT_PROG='tracepoint:sched:sched_switch { @[kstack, ustack, comm] = count(); }'

die() { echo "offcputime_overhead: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $LOOPS =~ ^[1-9][0-9]*$ ]] || die "LOOPS must be a positive integer (got '$LOOPS')"
[[ $(id -u) -eq 0 ]] || die "must run as root"
read -r -a CFGS <<<"$CONFIGS"
((${#CFGS[@]})) || die "CONFIGS is empty"

# --- tools -----------------------------------------------------------------
command -v perf >/dev/null || die "perf not found (apt-get install linux-perf)"
command -v taskset >/dev/null || die "taskset not found (apt-get install util-linux)"
for c in "${CFGS[@]}"; do
  case $c in
    baseline | perf) ;;
    tracekit) [[ -x $OFFCPUTIME ]] || die "$OFFCPUTIME missing: run 'make -C $REPO all'" ;;
    bpftrace) command -v bpftrace >/dev/null || die "bpftrace not found (apt-get install bpftrace)" ;;
    *) die "unknown config '$c' (baseline tracekit bpftrace perf)" ;;
  esac
done
perf bench sched pipe -h >/dev/null 2>&1 || perf bench sched pipe -l 10 >/dev/null 2>&1 ||
  die "'perf bench sched pipe' does not run"

# --- syscall numbers a tracer blocks in when it is waiting for events --------
case $(uname -m) in
  x86_64) POLL_NRS="7 271" EPOLL_NRS="232 281 441" ;;       # poll ppoll | epoll_wait epoll_pwait epoll_pwait2
  aarch64 | riscv64) POLL_NRS="73" EPOLL_NRS="22 441" ;;    # ppoll | epoll_pwait epoll_pwait2
  *) die "unsupported architecture $(uname -m) (add its poll/epoll syscall numbers)" ;;
esac

# --- temp dir, cleanup -------------------------------------------------------
TMP=$(mktemp -d "${TMPDIR:-/tmp}/offcpu-overhead.XXXXXX") || die "mktemp failed"
TPID=""   # tracer currently running (started by us)
BPID=""   # benchmark currently running (started by us)

stop_pid() { # pid timeout: SIGINT, then SIGTERM, then SIGKILL, by PID only
  local pid=$1 t=$2 i
  kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null; return; }
  kill -INT "$pid" 2>/dev/null
  for ((i = 0; i < t * 10; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "  pid $pid did not exit ${t}s after SIGINT: SIGTERM"
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && { log "  pid $pid: SIGKILL"; kill -KILL "$pid" 2>/dev/null; }
  fi
  wait "$pid" 2>/dev/null
}

# shellcheck disable=SC2317  # invoked from the EXIT trap
cleanup() {
  trap - EXIT INT TERM
  [[ -n $BPID ]] && stop_pid "$BPID" 5
  [[ -n $TPID ]] && stop_pid "$TPID" 30
  if [[ -n ${KEEP_TMP:-} ]]; then log "temp dir kept: $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# --- tracefs state (to check it is left as found) ----------------------------
TRACEFS=/sys/kernel/tracing
[[ -e $TRACEFS/events ]] || TRACEFS=/sys/kernel/debug/tracing
tracefs_state() {
  local f
  [[ -d $TRACEFS ]] || { echo "no tracefs"; return; }
  echo "instances: $(find "$TRACEFS/instances" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null | tr ' ' '\n' | sort | tr '\n' ' ')"
  for f in kprobe_events uprobe_events dynamic_events set_event tracing_on current_tracer; do
    [[ -r $TRACEFS/$f ]] && { echo "== $f"; cat "$TRACEFS/$f" 2>/dev/null; }
  done
}

# --- helpers -----------------------------------------------------------------
perf_fds() { # number of perf_event fds PID holds
  local f n=0
  for f in /proc/"$1"/fd/*; do [[ $(readlink "$f" 2>/dev/null) == 'anon_inode:[perf_event]' ]] && ((n++)); done
  echo "$n"
}
main_syscall() { local nr rest; read -r nr rest <"/proc/$1/syscall" 2>/dev/null && echo "$nr"; }
# in_list WORD LIST...: is WORD one of the whitespace-separated words of LIST
# shellcheck disable=SC2048
in_list() { local x=$1 y; shift; for y in $*; do [[ $x == "$y" ]] && return 0; done; return 1; }

now_ms() { date +%s%3N; }

# wait_ready CFG: 0 when the tracer $TPID is tracing, 1 if it died or timed out.
wait_ready() {
  local cfg=$1 deadline nr
  deadline=$(($(now_ms) + READY_TIMEOUT * 1000))
  while (($(now_ms) < deadline)); do
    kill -0 "$TPID" 2>/dev/null || return 1
    if (($(perf_fds "$TPID") > 0)); then
      nr=$(main_syscall "$TPID")
      case $cfg in
        tracekit) in_list "$nr" "$POLL_NRS" && return 0 ;;
        perf) in_list "$nr" "$POLL_NRS" && return 0 ;;
        bpftrace) grep -q '^Attaching ' "$TMP/tracer.out" 2>/dev/null &&
          in_list "$nr" "$EPOLL_NRS $POLL_NRS" && return 0 ;;
      esac
    fi
    sleep 0.02
  done
  return 1
}

start_tracer() { # cfg -> TPID
  local cfg=$1
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $cfg in
    tracekit) "$TMP/offcputime" -f >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace) bpftrace -e "$BT_PROG" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) perf record -N -e sched:sched_switch -g -a -o "$TMP/perf.data" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
}

# lost_events CFG -> "LOST<TAB>NOTES" (after the tracer exited)
lost_events() {
  local cfg=$1 err=$TMP/tracer.err lost=0 notes="" n
  case $cfg in
    tracekit)
      lost=$(sed -n 's/^WARNING: \([0-9]*\) scheduler events lost.*/\1/p' "$err" | awk '{s+=$1} END{print s+0}')
      n=$(sed -n 's/^WARNING: \([0-9]*\) off-CPU periods dropped.*/\1/p' "$err" | awk '{s+=$1} END{print s+0}')
      ((n)) && notes+="dropped=$n "
      n=$(sed -n 's/^WARNING: \([0-9]*\) stack traces lost.*/\1/p' "$err" | awk '{s+=$1} END{print s+0}')
      ((n)) && notes+="stacks_missing=$n "
      n=$(sed -n 's/^WARNING: \([0-9]*\) records could not be decoded.*/\1/p' "$err" | awk '{s+=$1} END{print s+0}')
      ((n)) && notes+="undecodable=$n "
      ;;
    bpftrace)
      lost=$(grep -o 'Lost [0-9]* events' "$err" "$TMP/tracer.out" 2>/dev/null | awk '{s+=$2} END{print s+0}')
      n=$(grep -c 'failed to look up stack id' "$err")
      ((n)) && notes+="stackid_errors=$n "
      ;;
    perf)
      local stats chunks
      stats=$(perf report -i "$TMP/perf.data" --stats 2>&1)
      chunks=$(awk '/^ *LOST events:/ {print $3; exit}' <<<"$stats")
      # per-event sections ("<event> stats:") carry the lost-sample totals
      lost=$(awk '/stats:$/ {per = ($0 !~ /Aggregated/)} per && /LOST_SAMPLES events:/ {s += $3; seen = 1}
                  END {print seen ? s : "none"}' <<<"$stats")
      if [[ $lost == none ]]; then
        lost=0
        if ((${chunks:-0} > 0)); then
          lost=$(perf report -D -i "$TMP/perf.data" 2>/dev/null |
            awk '/PERF_RECORD_LOST: / {n = $NF; sub(/.*:/, "", n); s += n} END{print s+0}')
        fi
      fi
      ((${chunks:-0})) && notes+="lost_chunks=$chunks "
      ;;
  esac
  printf '%s\t%s\n' "$lost" "${notes% }"
}

# run_bench -> US = usecs/op, or empty on failure (no subshell: BPID stays visible to cleanup)
run_bench() {
  US=""
  taskset -c "$BENCH_CPU" perf bench sched pipe -l "$LOOPS" >"$TMP/bench.out" 2>&1 &
  BPID=$!
  wait "$BPID"; local rc=$?; BPID=""
  ((rc == 0)) || { log "  perf bench failed (rc=$rc): $(tail -n 3 "$TMP/bench.out" | tr '\n' ' ')"; return; }
  US=$(awk '/usecs\/op/ {print $1; exit}' "$TMP/bench.out")
}

tracer_error() { # first meaningful line of the tracer's stderr
  local l
  l=$(grep -v -e RLIMIT_MEMLOCK -e '^$' "$TMP/tracer.err" | grep -m1 -i -e error -e fail -e cannot -e 'not ')
  [[ -n $l ]] || l=$(grep -v '^$' "$TMP/tracer.err" | tail -n 1)
  echo "${l:-exited before it was tracing}"
}

load_line() { echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; }
busy_procs() { # processes using >= 10% CPU (not ours)
  ps -eo pid=,pcpu=,comm= --sort=-pcpu | awk -v me=$$ '$1 != me && $2 >= 10 {printf "%s(%s, %s%%) ", $3, $1, $2}'
}

# --- run -----------------------------------------------------------------------
if in_list tracekit "${CFGS[*]}"; then
  cp "$OFFCPUTIME" "$TMP/offcputime" || die "cannot copy $OFFCPUTIME"
  "$TMP/offcputime" -h >/dev/null 2>&1 || die "$OFFCPUTIME -h fails"
fi

TRACEFS_BEFORE=$(tracefs_state)
START_LOAD=$(load_line)
START_BUSY=$(busy_procs)
log "offcputime overhead: ${ROUNDS} rounds, perf bench sched pipe -l $LOOPS on CPU $BENCH_CPU, $(nproc) CPUs, $(uname -r)"
log "configs: ${CFGS[*]}"
log "start: $START_LOAD; busy: ${START_BUSY:-none}"
if pgrep -x qemu-system-x86 >/dev/null 2>&1 || pgrep -f '^qemu-system' >/dev/null 2>&1; then
  log "WARNING: a qemu-system process is running; numbers will be noisy"
fi
[[ -n $RESULTS ]] && echo "round,config,usecs_op,lost,status" >"$RESULTS"

declare -A VALS LOST LOSTMAX NOTES FAILS FAILMSG
for c in "${CFGS[@]}"; do VALS[$c]=""; LOST[$c]=0; LOSTMAX[$c]=0; NOTES[$c]=""; FAILS[$c]=0; FAILMSG[$c]=""; done

# warm-up (discarded): page cache, perf binary
run_bench

n=${#CFGS[@]}
for ((r = 1; r <= ROUNDS; r++)); do
  order=()
  off=$(((r - 1) % n))
  for ((i = 0; i < n; i++)); do order+=("${CFGS[(off + i) % n]}"); done
  if ((((r - 1) / n) % 2)); then # reverse every other cycle
    rev=(); for ((i = n - 1; i >= 0; i--)); do rev+=("${order[i]}"); done; order=("${rev[@]}")
  fi
  log "round $r/$ROUNDS: ${order[*]}"
  for cfg in "${order[@]}"; do
    status=ok lost="" notes="" us=""
    if [[ $cfg == baseline ]]; then
      run_bench; us=$US
    else
      start_tracer "$cfg"
      if ! wait_ready "$cfg"; then
        status=failed
        stop_pid "$TPID" 10; TPID=""
        FAILMSG[$cfg]=$(tracer_error)
      else
        run_bench; us=$US
        if ! kill -0 "$TPID" 2>/dev/null; then
          status=failed; FAILMSG[$cfg]="tracer exited during the benchmark: $(tracer_error)"
          wait "$TPID" 2>/dev/null
        else
          stop_pid "$TPID" "$STOP_TIMEOUT"
        fi
        TPID=""
        IFS=$'\t' read -r lost notes < <(lost_events "$cfg")
      fi
      rm -f "$TMP/perf.data" "$TMP/perf.data.old" "$TMP/tracer.out"
    fi
    [[ -n $us ]] || status=failed
    if [[ $status == ok ]]; then
      VALS[$cfg]+="$us "
      if [[ $cfg != baseline ]]; then
        LOST[$cfg]=$((LOST[$cfg] + lost))
        ((lost > LOSTMAX[$cfg])) && LOSTMAX[$cfg]=$lost
        [[ -n $notes ]] && NOTES[$cfg]+="$notes;"
      fi
    else
      FAILS[$cfg]=$((FAILS[$cfg] + 1))
    fi
    log "  $(printf '%-9s %10s usecs/op  lost %-8s %s %s' "$cfg" "${us:--}" "${lost:--}" "$status" "$notes")"
    [[ -n $RESULTS ]] && echo "$r,$cfg,${us},${lost},$status" >>"$RESULTS"
  done
done

END_LOAD=$(load_line)
END_BUSY=$(busy_procs)

# --- summary -------------------------------------------------------------------
stats() { # values... -> "median min max count"
  printf '%s\n' "$@" | sort -g | awk 'NF {v[++n] = $1} END {
    if (n == 0) { print "- - - 0"; exit }
    m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf "%.3f %.3f %.3f %d\n", m, v[1], v[n], n }'
}
sum_notes() { # "k=v k=v;k=v;" -> "k=sum ..."
  tr ';[:blank:]' '\n' <<<"$1" | awk -F= 'NF == 2 {s[$1] += $2; if (!($1 in o)) o[$1] = ++n}
    END {for (k in o) out[o[k]] = k "=" s[k]; for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), out[i]}'
}

base_med=""
if in_list baseline "${CFGS[*]}"; then
  # VALS[...] are space-separated lists: split on purpose
  # shellcheck disable=SC2086
  read -r base_med _ <<<"$(stats ${VALS[baseline]})"
  [[ $base_med == - ]] && base_med=""
fi

echo
echo "offcputime overhead: perf bench sched pipe -l $LOOPS pinned to CPU $BENCH_CPU; $ROUNDS rounds, interleaved; $(nproc) CPUs, kernel $(uname -r)"
echo "load: start $START_LOAD (busy: ${START_BUSY:-none}); end $END_LOAD (busy: ${END_BUSY:-none})"
echo
printf '%-9s %5s %10s %10s %10s %17s %14s  %s\n' config runs "median" min max "slowdown" "lost sum/max" notes
printf '%-9s %5s %10s %10s %10s %17s %14s  %s\n' "" "" "usecs/op" "usecs/op" "usecs/op" "vs baseline" "per run" ""
for c in "${CFGS[@]}"; do
  # shellcheck disable=SC2086
  read -r med mn mx cnt <<<"$(stats ${VALS[$c]})"
  if ((cnt == 0)); then
    printf '%-9s %5s %10s %10s %10s %17s %14s  %s\n' "$c" 0 - - - - - "unavailable: ${FAILMSG[$c]}"
    continue
  fi
  if [[ $c == baseline ]]; then slow="1.00x"; lost_s="-"
  else
    if [[ -n $base_med ]]; then
      slow=$(awk -v a="$med" -v b="$base_med" 'BEGIN {printf "%.2fx (%+.0f%%)", a / b, (a / b - 1) * 100}')
    else slow="-"; fi
    lost_s="${LOST[$c]}/${LOSTMAX[$c]}"
  fi
  note=$(sum_notes "${NOTES[$c]}")
  ((FAILS[$c])) && note+="${note:+; }${FAILS[$c]} run(s) failed: ${FAILMSG[$c]}"
  printf '%-9s %5s %10s %10s %10s %17s %14s  %s\n' "$c" "$cnt" "$med" "$mn" "$mx" "$slow" "$lost_s" "$note"
done

TRACEFS_AFTER=$(tracefs_state)
echo
if [[ $TRACEFS_BEFORE == "$TRACEFS_AFTER" ]]; then
  echo "tracefs: unchanged (instances, kprobe/uprobe/dynamic events, set_event, tracing_on, current_tracer)"
else
  # none of the three tracers writes to tracefs (they use perf_event_open), so
  # a difference normally comes from something else running on the machine
  echo "tracefs: CHANGED during the run (by this run or by another process):"
  diff <(echo "$TRACEFS_BEFORE") <(echo "$TRACEFS_AFTER") | sed 's/^/  /'
  # tracekit names its instances/groups tracekit_<pid>[_n]: say whose they are
  for w in $TRACEFS_AFTER; do
    [[ $w =~ ^tracekit_([0-9]+) ]] || continue
    pid=${BASH_REMATCH[1]}
    if [[ -r /proc/$pid/cmdline ]]; then
      echo "  $w: belongs to running pid $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline | cut -c1-80)), not started by this script"
    fi
  done
fi
exit 0
