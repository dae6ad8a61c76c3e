#!/usr/bin/env bash
# bitesize: how much it slows down a busy O_DIRECT read loop, against
# perf-tools' bitesize (perf stat with the same filtered counters).
#
#   bench/parts/bitesize_overhead.sh [ROUNDS]        (as root)
#
# The workload: build/workloads/directio reading 4 KiB with O_DIRECT from a
# loop device (made on a file in the temp dir, removed at the end) as fast
# as it can for SECS seconds, pinned to BENCH_CPU; it prints the reads made.
# Every read is one block request, one hit of block:block_rq_issue.
#
#   baseline    nothing
#   tracekit    build/bin/bitesize (every device, the default 5 buckets)
#   perf-tools  /usr/sbin/bitesize-perf (perf stat -a, the same 5 filters)
#
# interleaved over ROUNDS rounds (default 5, the order rotated every round).
# Two measures: reads/s (wall clock: very sensitive to other load), and the
# loop's own CPU time per read (user + system, getrusage), which holds the
# tracepoint's cost (block_rq_issue fires in the submitting task) and moves
# less with other load.
# Ready: tracekit has printed its header (after enabling its counters);
# bitesize-perf's perf stat has started its "sleep 999999" (perf stat enables
# the counters at that exec). Stopped with SIGINT (perf-tools': SIGTERM to
# that sleep, which is what perf stat does on Ctrl-C; SIGINT itself is
# ignored in a script's background jobs). Printed per configuration: median, min, max
# reads/s, the slowdown of the median against the baseline's (ns per read),
# and the requests of 1-8 KB the tracer counted (>= the reads the loop made:
# the system's other I/O adds).
#
# Summary row (SUMMARY=FILE, see bench/lib.sh): the loop's CPU per read
# under bitesize and under perf-tools' bitesize; target: bitesize's median
# at most perf-tools'.
#
# Environment: ROUNDS, SECS (3), BENCH_CPU (0), BITESIZE (build/bin/bitesize),
# TMPDIR, KEEP_TMP=1.
set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"

[[ ${1:-} == -h ]] && { usage; exit 0; }
quick ROUNDS=1 SECS=1
ROUNDS=${1:-${ROUNDS:-5}}
SECS=${SECS:-3}
BENCH_CPU=${BENCH_CPU:-0}
posint ROUNDS "$ROUNDS"
posint SECS "$SECS"
need_root
need_cmd losetup mount
need_cmd perf linux-perf
[[ -x /usr/sbin/bitesize-perf ]] || die "/usr/sbin/bitesize-perf not found (apt-get install perf-tools-unstable)"
[[ -x $REPO/build/workloads/directio ]] || die "build/workloads/directio missing (make workloads)"

bench_tmpdir bitesize-bench
LOOP="" WPID=""
stop_workload() {
  [[ -n $WPID ]] && { kill -KILL "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; WPID=""; }
  [[ -n $LOOP ]] && { losetup -d "$LOOP"; LOOP=""; }
  return 0
}
copy_tool "${BITESIZE:-$REPO/build/bin/bitesize}" bitesize
truncate -s 8M "$TMP/disk.img"
LOOP=$(losetup -f --show "$TMP/disk.img") || die "losetup failed"

# descendant_of PID ANCESTOR: is PID in ANCESTOR's tree
descendant_of() {
  local p=$1
  while ((p > 1)); do
    ((p == $2)) && return 0
    p=$(awk '{print $4}' "/proc/$p/stat" 2>/dev/null) || return 1
    [[ -n $p ]] || return 1
  done
  return 1
}
perf_sleep() { # the "sleep 999999" perf stat runs for bitesize-perf $TPID
  local p
  for p in $(pgrep -x sleep); do
    [[ $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline") == "sleep 999999 " ]] &&
      descendant_of "$p" "$TPID" && { echo "$p"; return 0; }
  done
  return 1
}

tracer_ready() {
  case $1 in
    tracekit) grep -q 'Ctrl-C\.\.\.' "$TMP/tracer.out" && (($(perf_fds "$TPID") > 0)) ;;
    perf-tools) perf_sleep >/dev/null ;;
  esac
}
start_tracer() {
  : >"$TMP/tracer.out"; : >"$TMP/tracer.err"
  case $1 in
    tracekit) "$TMP/bitesize" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
    perf-tools) /usr/sbin/bitesize-perf >"$TMP/tracer.out" 2>"$TMP/tracer.err" & ;;
  esac
  TPID=$!
}
stop_tracer() {
  local cfg=$1 s
  if [[ $cfg == perf-tools ]]; then
    # SIGINT is ignored in background jobs of a script (and bash cannot
    # trap it then): end perf's workload as perf itself does on Ctrl-C.
    s=$(perf_sleep) && kill -TERM "$s"
  else
    kill -INT "$TPID"
  fi
  wait "$TPID"
  TPID=""
}

# run_loop: the workload's reads in SECS seconds -> READS
run_loop() {
  rm -f "$TMP/wl.out"
  taskset -c "$BENCH_CPU" "$REPO/build/workloads/directio" "$LOOP" -l 4096 "$SECS" >"$TMP/wl.out" &
  WPID=$!
  until grep -qs "^ready $WPID\$" "$TMP/wl.out"; do sleep 0.02; done
  kill -USR1 "$WPID"
  until grep -q '^done' "$TMP/wl.out"; do sleep 0.05; done
  READS=$(awk '/^ops/ {print $2}' "$TMP/wl.out")
  CPU_NS=$(awk '/^ops/ {print $4}' "$TMP/wl.out")
  kill -KILL "$WPID"; wait "$WPID" 2>/dev/null; WPID=""
}

# The "1.0 -> 7.9" row's count in the tracer's output
counted_4k() { awk -F: '/ 1\.0 -> 7\.9/ {split($2, a, " "); print a[1]}' "$TMP/tracer.out"; }

CONFIGS=(baseline tracekit perf-tools)
declare -A RATES COUNTED CPUS
BEFORE=$(tracefs_state)
load_start
for ((r = 1; r <= ROUNDS; r++)); do
  round_order "$r" "${CONFIGS[@]}"
  for cfg in "${ORDER[@]}"; do
    if [[ $cfg == baseline ]]; then
      run_loop
    else
      start_tracer "$cfg"
      wait_ready "$cfg" || die "$cfg never got ready: $(tracer_error)"
      run_loop
      stop_tracer "$cfg"
      COUNTED[$cfg]+="$(counted_4k)/$READS "
    fi
    RATES[$cfg]+="$((READS / SECS)) "
    CPUS[$cfg]+="$CPU_NS "
    log "round $r $cfg: $((READS / SECS)) reads/s, $CPU_NS ns of CPU per read"
  done
done
load_end

# shellcheck disable=SC2086
read -r base _ <<<"$(stats 0 ${RATES[baseline]})"
# shellcheck disable=SC2086
read -r cbase _ <<<"$(stats 0 ${CPUS[baseline]})"
printf '%-10s %9s %9s %9s %15s %11s %15s  %s\n' config "median/s" "min/s" "max/s" "time/read" \
  "cpu_ns/read" "cpu vs base" "1-8 KB counted/reads"
for cfg in "${CONFIGS[@]}"; do
  # shellcheck disable=SC2086
  read -r m lo hi _ <<<"$(stats 0 ${RATES[$cfg]})"
  # shellcheck disable=SC2086
  read -r c _ <<<"$(stats 0 ${CPUS[$cfg]})"
  printf '%-10s %9s %9s %9s %15s %11s %15s  %s\n' "$cfg" "$m" "$lo" "$hi" "$(slowdown "$base" "$m")" \
    "$c" "$(slowdown "$c" "$cbase")" "${COUNTED[$cfg]:-}"
done
load_summary
tracefs_report "$BEFORE" "$(tracefs_state)"
# the summary row: the loop's CPU per read, against the baseline's
cell() {
  [[ -n ${CPUS[$1]:-} ]] || { echo -; return; }
  local c
  # shellcheck disable=SC2086
  read -r c _ <<<"$(stats 0 ${CPUS[$1]})"
  echo "$c ns CPU/read, $(slowdown "$c" "$cbase")"
}
verdict="missed more CPU per read than perf-tools"
# shellcheck disable=SC2086
awk -v a="$(median 1 ${CPUS[tracekit]})" -v b="$(median 1 ${CPUS[perf-tools]})" 'BEGIN {exit !(a <= b)}' && verdict=met
summary_row "bitesize, O_DIRECT 4 KiB read loop (untraced $cbase ns CPU/read)" "$(cell tracekit)" - - \
  "$(cell perf-tools)" "<= perf-tools (CPU per read)" "$verdict"
