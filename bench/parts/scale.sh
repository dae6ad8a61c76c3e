#!/usr/bin/env bash
# stackcount at scale: how long the report of 100,000 unique stacks takes,
# how much memory they cost, and whether the memory stays flat over a long
# run at a high event rate; against bpftrace and perf where they have an
# equivalent.
#
#   bench/parts/scale.sh [ROUNDS]        (as root; ROUNDS default 3)
#   PARTS=report bench/parts/scale.sh    (skip the long run)
#   DURATION=60 PARTS=long bench/parts/scale.sh
#
# The workload is build/workloads/manystacks (tests/workloads/manystacks.c):
# exactly STACKS (100000) distinct user stacks, each making one getppid
# system call from a function of its own at the end of a chain of 11 to 13
# generated functions (stack i is i in base 256, one function per digit,
# under 10 frames of recursion): 15 to 17 user frames per stack. It is paced
# at PACE calls/s (50000) so that no tracer drops events and the truth is
# exact: the report must hold exactly STACKS stacks, counting STACKS events.
#
# Part "report": per round (ROUNDS, interleaved with round_order), each
# configuration traces one run of the workload (STACKS calls, -p PID):
#
#   tracekit    stackcount -p PID t:syscalls:sys_enter_getppid (perf backend,
#               user + kernel stacks; sys_enter tracepoints carry user
#               registers, so the kernel side is empty), bcc's multi-line
#               text to a file
#   tracekit-o  the same with -o S.svg -o S.pb.gz -o S.folded as well
#   bpftrace    bpftrace -p PID -e 't:syscalls:sys_enter_getppid
#               /pid == PID/ { @[ustack, kstack] = count(); }' with
#               BPFTRACE_MAP_KEYS_MAX=262144 (its default, 4096, keeps 4%),
#               on BT_STACKS (1000) stacks only and in the first round only:
#               bpftrace 0.17 took 196 s to print 10,000 (and showed 9,635)
#   perf        perf record -N -g -e syscalls:sys_enter_getppid -p PID, then
#               perf script (every sample symbolized: what a flame graph of
#               perf needs) to a file
#
# Measured: the report time, from the SIGINT sent once the workload is done
# to the tracer's exit (perf: that plus the perf script run), and the peak
# RSS (ru_maxrss through /usr/bin/time; perf: the larger of record's and
# script's). Checked: the stacks in the report (tracekit: records;
# bpftrace: map entries; perf: samples) and the events they count against
# STACKS, and the lost events. tracekit's -o run also says what its files
# cost over the plain run.
#
# Part "long": stackcount keeps one run's counts in memory (no -i): its RSS
# must stop growing once every distinct stack has been seen. PRODUCERS
# copies of manystacks (LONG_STACKS distinct stacks each, looping) run
# paced at LONG_RATE events/s in all, for DURATION seconds (600), under
# `stackcount LONG_ARGS t:syscalls:sys_enter_getppid` (system-wide; default
# LONG_ARGS "-K": the ftrace backend, the cheapest per event; LONG_ARGS=""
# the perf backend, user + kernel stacks). VmRSS is
# printed every RSS_EVERY seconds (10); at the end: first, last and max
# RSS, the slope
# after warm-up (the first quarter of the run left out; least squares, in
# KiB per minute), the events the report counted and those lost. The rate
# reported is what was counted / DURATION, not the pace asked.
#
# Environment: ROUNDS, PARTS ("report long"), CONFIGS (a subset and order of
# "tracekit tracekit-o bpftrace perf"), STACKS, BT_STACKS, PACE, DURATION,
# LONG_RATE (1000000), PRODUCERS (2), LONG_STACKS (100000), LONG_ARGS,
# RSS_EVERY, STACKCOUNT (the binary; copied to the temp dir first),
# READY_TIMEOUT, STOP_TIMEOUT, TMPDIR, KEEP_TMP=1, SUMMARY (see lib.sh).
# With the defaults, "report" takes about 1-2 minutes; "long" takes
# DURATION plus a few seconds.
#
# Summary rows: "report 100k unique stacks" (seconds, target < 1 s), "RSS at
# 100k unique stacks" (MiB, target < 64 MiB), "RSS over DURATION at R
# events/s" (first/last/max and slope, target bounded: slope under 1% of
# the last RSS per minute).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=SCRIPTDIR/../lib.sh
source "$HERE/../lib.sh"

quick ROUNDS=1 STACKS=10000 BT_STACKS=100 DURATION=20 RSS_EVERY=5 LONG_RATE=100000 LONG_STACKS=10000
ROUNDS=${1:-${ROUNDS:-3}}
PARTS=${PARTS:-report long}
CONFIGS=${CONFIGS:-tracekit tracekit-o bpftrace perf}
STACKS=${STACKS:-100000}
BT_STACKS=${BT_STACKS:-1000}
PACE=${PACE:-50000}
DURATION=${DURATION:-600}
LONG_RATE=${LONG_RATE:-1000000}
PRODUCERS=${PRODUCERS:-2}
LONG_STACKS=${LONG_STACKS:-100000}
LONG_ARGS=${LONG_ARGS--K}  # empty: the perf backend (user + kernel stacks)
RSS_EVERY=${RSS_EVERY:-10}
READY_TIMEOUT=${READY_TIMEOUT:-30}
STOP_TIMEOUT=${STOP_TIMEOUT:-60}
STACKCOUNT=${STACKCOUNT:-$REPO/build/bin/stackcount}
WORKLOAD=$REPO/build/workloads/manystacks
TP=syscalls:sys_enter_getppid

usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
[[ ${1:-} == -h || ${1:-} == --help ]] && usage
posint ROUNDS "$ROUNDS"; posint STACKS "$STACKS"; posint PACE "$PACE"; posint BT_STACKS "$BT_STACKS"
posint DURATION "$DURATION"; posint LONG_RATE "$LONG_RATE"; posint PRODUCERS "$PRODUCERS"
posint RSS_EVERY "$RSS_EVERY"; posint LONG_STACKS "$LONG_STACKS"
need_root
need_cmd gcc gcc; need_cmd perf linux-perf; need_cmd bpftrace bpftrace
[[ -x /usr/bin/time ]] || die "/usr/bin/time not found (apt-get install time)"
[[ -x $WORKLOAD ]] || die "$WORKLOAD not built (make workloads)"
poll_syscalls || die "unsupported architecture $(uname -m)"

bench_tmpdir scale
cp "$WORKLOAD" "$TMP/manystacks" || die "cannot copy $WORKLOAD"
copy_tool "$STACKCOUNT" stackcount

# --- the workloads -------------------------------------------------------------
WPIDS=()  # workload pids (stopped by cleanup)
stop_workload() { # (also cleanup's first step: a tracer still running is stopped)
  local p
  [[ -n ${CPID:-} ]] && { kill -INT "$CPID" 2>/dev/null; stop_pid "$TPID" 10; TPID=""; CPID=""; }
  for p in "${WPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  WPIDS=()
}

# start_workload NAME ARGS...: manystacks ARGS, parked until go_workloads;
# its pid in WPID (and WPIDS); its output in $TMP/NAME.out
start_workload() {
  local name=$1 fifo
  shift
  fifo=$TMP/$name.go
  rm -f "$fifo"; mkfifo "$fifo" || die "mkfifo failed"
  "$TMP/manystacks" "$@" <"$fifo" >"$TMP/$name.out" 2>&1 &
  WPID=$!
  WPIDS+=("$WPID")
  exec {GOFD}>"$fifo"  # opens once the workload has it open for reading
  GOFDS+=("$GOFD")
  wait_line "$TMP/$name.out" '^ready ' 10 || die "manystacks did not start: $(cat "$TMP/$name.out")"
}
GOFDS=()
go_workloads() { local fd; for fd in "${GOFDS[@]}"; do echo go >&"$fd"; done; }
close_workloads() { # stop the workloads, close their go fds
  local fd
  stop_workload
  for fd in "${GOFDS[@]}"; do exec {fd}>&-; done
  GOFDS=()
}

# --- tracers under /usr/bin/time -----------------------------------------------
# The tracer runs as `time -f %e %M -o TMP/rusage TRACER...`: TPID is time's
# pid (lib.sh waits for it), CPID the tracer's own (signals and readiness:
# GNU time ignores SIGINT while it waits).
child_of() { local c i; for ((i = 0; i < 100; i++)); do c=$(pgrep -P "$1" | head -n 1); [[ -n $c ]] && { echo "$c"; return; }; sleep 0.01; done; }

start_tracer() { # CFG PID
  local cfg=$1 pid=$2
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"; rm -f "$TMP"/s.svg "$TMP"/s.pb.gz "$TMP"/s.folded
  case $cfg in
    tracekit) /usr/bin/time -f '%e %M' -o "$TMP/rusage" "$TMP/stackcount" -p "$pid" "t:$TP" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    tracekit-o) /usr/bin/time -f '%e %M' -o "$TMP/rusage" "$TMP/stackcount" -p "$pid" \
      -o "$TMP/s.svg" -o "$TMP/s.pb.gz" -o "$TMP/s.folded" "t:$TP" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    bpftrace) BPFTRACE_MAP_KEYS_MAX=262144 /usr/bin/time -f '%e %M' -o "$TMP/rusage" \
      bpftrace -p "$pid" -e "t:$TP /pid == $pid/ { @[ustack, kstack] = count(); }" \
      >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf) /usr/bin/time -f '%e %M' -o "$TMP/rusage" perf record -N -g -e "$TP" -p "$pid" \
      -o "$TMP/perf.data" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
  CPID=$(child_of "$TPID")
}

tracer_ready() { # CFG: is $TPID (the tracer itself, see wait_tracer_ready) tracing
  case $1 in
    tracekit*) grep -q 'Hit Ctrl-C to end\.' "$TMP/tracer.out" 2>/dev/null &&
      in_list "$(main_syscall "$TPID")" "$POLL_NRS" ;;
    bpftrace) ready_bpftrace ;;
    perf) ready_perf ;;
  esac
}

# wait_tracer_ready CFG: lib.sh's wait_ready on the tracer (CPID), not time
wait_tracer_ready() {
  local t=$TPID rc
  TPID=$CPID
  wait_ready "$1"; rc=$?
  TPID=$t
  return "$rc"
}

# stop_tracer: SIGINT to the tracer; STOP_MS = ms until time's exit
stop_tracer() {
  local t0 i
  t0=$(now_ms)
  kill -INT "$CPID" 2>/dev/null
  for ((i = 0; i < STOP_TIMEOUT * 200; i++)); do kill -0 "$TPID" 2>/dev/null || break; sleep 0.005; done
  STOP_MS=$(($(now_ms) - t0))
  stop_pid "$TPID" 5
  TPID=""; CPID=""
}

# --- part 1: the report of STACKS unique stacks -------------------------------
# run_report CFG: RLINE = one CSV line: cfg,report_s,rss_kib,stacks,events,lost,note
run_report() {
  local cfg=$1 wpid rep_s rss stacks events lost=0 note="" t0 ms2 rss2 n=$STACKS
  [[ $cfg == bpftrace ]] && n=$BT_STACKS
  start_workload report "$n" 1 "$PACE"
  wpid=$WPID
  start_tracer "$cfg" "$wpid"
  if ! wait_tracer_ready "$cfg"; then
    RLINE="$cfg,-,-,-,-,-,unavailable: $(tracer_error)"
    kill -INT "$CPID" 2>/dev/null; stop_pid "$TPID" 5; TPID=""; CPID=""; close_workloads; return
  fi
  go_workloads
  wait_line "$TMP/report.out" '^done ' $((n / PACE + 60)) || note+="workload-not-done "
  stop_tracer
  rss=$(awk 'END {print $2}' "$TMP/rusage")
  rep_s=$(awk -v m="$STOP_MS" 'BEGIN {printf "%.3f", m / 1000}')
  case $cfg in
    tracekit*)
      stacks=$(grep -cE '^    [0-9]+$' "$TMP/tracer.out")
      events=$(awk '/^    [0-9]+$/ {s += $1} END {print s + 0}' "$TMP/tracer.out")
      lost=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$TMP/tracer.err")
      grep -q 'could not be displayed' "$TMP/tracer.err" && note+="missed-stacks "
      if [[ $cfg == tracekit-o ]]; then
        local f
        for f in s.svg s.pb.gz s.folded; do [[ -s $TMP/$f ]] || note+="no-$f "; done
        [[ -s $TMP/s.folded ]] && note+="folded_lines=$(wc -l <"$TMP/s.folded") "
      fi ;;
    bpftrace)
      stacks=$(grep -c '^@\[' "$TMP/tracer.out")
      events=$(awk '/^\]: [0-9]+$/ {s += $2} END {print s + 0}' "$TMP/tracer.out")
      read -r lost _ <<<"$(lost_bpftrace)" ;;
    perf)
      # perf script symbolizes every sample: the time of a report from perf
      t0=$(now_ms)
      /usr/bin/time -f '%e %M' -o "$TMP/rusage2" perf script -i "$TMP/perf.data" \
        >"$TMP/perf.script" 2>/dev/null
      ms2=$(($(now_ms) - t0))
      rss2=$(awk 'END {print $2}' "$TMP/rusage2")
      ((rss2 > rss)) && rss=$rss2
      rep_s=$(awk -v a="$STOP_MS" -v b="$ms2" 'BEGIN {printf "%.3f", (a + b) / 1000}')
      note+="record_stop=${STOP_MS}ms script=${ms2}ms "
      # samples: perf script prints one header line per sample, then its frames
      events=$(grep -c "^ *manystacks " "$TMP/perf.script")
      stacks=-
      read -r lost _ <<<"$(lost_perf "$(perf_stats)")"
      rm -f "$TMP/perf.data" "$TMP/perf.script" ;;
  esac
  close_workloads
  RLINE="$cfg,$rep_s,$rss,$stacks,$events,${lost:-0},${note% }"
}

part_report() {
  local r cfg
  : >"$TMP/report.csv"
  for ((r = 1; r <= ROUNDS; r++)); do
    # shellcheck disable=SC2086
    round_order "$r" $CONFIGS
    for cfg in "${ORDER[@]}"; do
      ((r > 1)) && [[ $cfg == bpftrace ]] && continue  # minutes per run: once
      run_report "$cfg"
      log "round $r: $RLINE"
      echo "$RLINE" >>"$TMP/report.csv"
    done
  done

  echo
  echo "== report of $STACKS unique stacks ($ROUNDS rounds; time from SIGINT to exit; peak RSS)"
  printf '%-11s %10s %10s %10s %10s %9s %8s %6s  %s\n' config median_s min_s max_s \
    rss_MiB stacks events lost notes
  local med mn mx rss stacks events lost notes
  declare -gA REP_S REP_RSS REP_OK
  for cfg in $CONFIGS; do
    if grep -q "^$cfg,-," "$TMP/report.csv"; then
      printf '%-11s %s\n' "$cfg" "$(grep -m1 "^$cfg,-," "$TMP/report.csv" | cut -d, -f7-)"
      continue
    fi
    # shellcheck disable=SC2046
    read -r med mn mx _ <<<"$(stats 3 $(awk -F, -v c="$cfg" '$1 == c {print $2}' "$TMP/report.csv"))"
    # shellcheck disable=SC2046
    rss=$(median 1 $(awk -F, -v c="$cfg" '$1 == c {printf "%.1f\n", $3 / 1024}' "$TMP/report.csv"))
    stacks=$(awk -F, -v c="$cfg" '$1 == c {print $4}' "$TMP/report.csv" | sort -u | paste -sd/)
    events=$(awk -F, -v c="$cfg" '$1 == c {print $5}' "$TMP/report.csv" | sort -u | paste -sd/)
    lost=$(awk -F, -v c="$cfg" '$1 == c {s += $6} END {print s + 0}' "$TMP/report.csv")
    notes=$(awk -F, -v c="$cfg" '$1 == c {print $7}' "$TMP/report.csv" | sort -u | paste -sd';')
    printf '%-11s %10s %10s %10s %10s %9s %8s %6s  %s\n' "$cfg" "$med" "$mn" "$mx" "$rss" \
      "$stacks" "$events" "$lost" "$notes"
    REP_S[$cfg]=$med
    REP_RSS[$cfg]=$rss
    # exact: every stack and every event, nothing lost
    local n=$STACKS
    [[ $cfg == bpftrace ]] && n=$BT_STACKS
    if [[ $cfg == perf ]]; then [[ $events == "$n" && $lost == 0 ]]; else
      [[ $stacks == "$n" && $events == "$n" && $lost == 0 ]]; fi && REP_OK[$cfg]=1
  done
  echo "exact: tracekit must show $STACKS stacks counting $STACKS events, bpftrace $BT_STACKS (one run: it takes"
  echo "minutes per 10,000 stacks), perf $STACKS samples"

  local tk=${REP_S[tracekit]:-} bt=${REP_S[bpftrace]:-} pf=${REP_S[perf]:-} verdict
  cell() { [[ -n $1 ]] && echo "$1 $2" || echo "-"; }
  verdict=-
  if [[ -n $tk ]]; then
    if [[ -z ${REP_OK[tracekit]:-} ]]; then verdict="missed report not exact"
    elif awk -v t="$tk" 'BEGIN {exit !(t < 1)}'; then verdict=met
    else verdict="missed ${tk} s"; fi
  fi
  local tkcell
  tkcell=$(cell "$tk" s)
  [[ -n ${REP_S[tracekit-o]:-} ]] && tkcell+=" (${REP_S[tracekit-o]} s with .svg .pb.gz .folded)"
  local btcell=-
  [[ -n $bt ]] && btcell="$bt s at $BT_STACKS stacks"
  [[ -n $bt && -z ${REP_OK[bpftrace]:-} ]] && btcell+=" (not exact)"
  summary_row "report 100k unique stacks" "$tkcell" "$btcell" \
    "$(cell "$pf" "s (record stop + script)")" - "< 1 s" "$verdict"
  tk=${REP_RSS[tracekit]:-}
  verdict=-
  if [[ -n $tk ]]; then
    if awk -v t="$tk" 'BEGIN {exit !(t < 64)}'; then verdict=met; else verdict="missed ${tk} MiB"; fi
  fi
  btcell=-
  [[ -n ${REP_RSS[bpftrace]:-} ]] && btcell="${REP_RSS[bpftrace]} MiB at $BT_STACKS stacks"
  summary_row "RSS at 100k unique stacks" "$(cell "$tk" MiB)" "$btcell" \
    "$(cell "${REP_RSS[perf]:-}" MiB)" - "< 64 MiB" "$verdict"
}

# --- part 2: RSS over a long run -------------------------------------------------
part_long() {
  local i per t0 now_s next rss events first="" last max=0
  per=$((LONG_RATE / PRODUCERS))
  log "long run: $PRODUCERS producers at $per events/s each, $DURATION s, stackcount $LONG_ARGS"
  for ((i = 0; i < PRODUCERS; i++)); do start_workload "long$i" "$LONG_STACKS" 0 "$per"; done
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  # shellcheck disable=SC2086
  /usr/bin/time -f '%e %M' -o "$TMP/rusage" "$TMP/stackcount" $LONG_ARGS "t:$TP" \
    >"$TMP/tracer.out" 2>"$TMP/tracer.err" &
  TPID=$!
  CPID=$(child_of "$TPID")
  wait_tracer_ready tracekit || die "stackcount did not start: $(tracer_error)"
  go_workloads
  echo
  echo "== RSS over $DURATION s: stackcount $LONG_ARGS t:$TP, $PRODUCERS x manystacks $LONG_STACKS 0 $per"
  printf '%8s %10s\n' t_s rss_KiB
  : >"$TMP/rss.txt"
  t0=$(now_ms)
  for ((next = 0; next <= DURATION; next += RSS_EVERY)); do
    while (($(now_ms) - t0 < next * 1000)); do sleep 0.2; done
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$CPID/status" 2>/dev/null)
    [[ -n $rss ]] || die "stackcount exited: $(tracer_error)"
    now_s=$(((($(now_ms) - t0) + 500) / 1000))
    printf '%8s %10s\n' "$now_s" "$rss"
    echo "$now_s $rss" >>"$TMP/rss.txt"
  done
  stop_tracer
  close_workloads
  events=$(awk '/^  [^ ]/ {n = 1} /^    [0-9]+$/ {s += $1} END {print s + 0}' "$TMP/tracer.out")
  local lost rate slope hwm
  lost=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$TMP/tracer.err")
  hwm=$(awk 'END {print $2}' "$TMP/rusage")
  first=$(awk 'NR == 1 {print $2}' "$TMP/rss.txt")
  last=$(awk 'END {print $2}' "$TMP/rss.txt")
  max=$(awk '$2 > m {m = $2} END {print m}' "$TMP/rss.txt")
  # least squares over the samples after the first quarter, KiB per minute
  slope=$(awk -v d="$DURATION" '$1 >= d / 4 {n++; sx += $1; sy += $2; sxx += $1 * $1; sxy += $1 * $2}
    END {if (n < 2 || n * sxx == sx * sx) print "-"; else printf "%.1f", 60 * (n * sxy - sx * sy) / (n * sxx - sx * sx)}' "$TMP/rss.txt")
  rate=$(awk -v e="$events" -v l="${lost:-0}" -v d="$DURATION" 'BEGIN {printf "%.0f", (e + l) / d}')
  echo "RSS KiB: first $first, last $last, max $max (peak VmHWM $hwm); slope after $((DURATION / 4)) s: $slope KiB/min"
  echo "events counted $events, lost ${lost:-0}: $rate events/s achieved (asked $LONG_RATE); report took ${STOP_MS} ms"
  local verdict
  if [[ $slope == - ]]; then verdict="missed too short"
  elif awk -v s="$slope" -v l="$last" 'BEGIN {exit !(s < 0.01 * l)}'; then verdict=met
  else verdict="missed +$slope KiB/min"; fi
  ((${lost:-0} > 0)) && verdict+=" (${lost} lost)"
  summary_row "RSS over ${DURATION} s at $rate events/s" \
    "$((first / 1024))/$((last / 1024))/$((max / 1024)) MiB first/last/max, ${slope} KiB/min" \
    - - - "bounded" "$verdict"
}

BEFORE=$(tracefs_state)
load_start
for p in $PARTS; do
  case $p in
    report) part_report ;;
    long) part_long ;;
    *) die "unknown part $p (report, long)" ;;
  esac
done
load_end
echo
load_summary
tracefs_report "$BEFORE" "$(tracefs_state)"
