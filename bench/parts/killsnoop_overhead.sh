#!/usr/bin/env bash
# Overhead of killsnoop on a loop that sends signals as fast as it can.
#
#   bench/parts/killsnoop_overhead.sh [ROUNDS]        (as root)
#
# Runs the kills workload (build/workloads/kills N 0 0: N kill()s of SIGUSR2
# to a child that ignores it, raw syscalls, then one tkill()) and reads the
# signals per second it reports, under each configuration:
#
#   baseline   nothing
#   tracekit   build/bin/killsnoop          (system-wide, output to a file)
#   perftools  /usr/sbin/killsnoop-perf     (system-wide, output to a file;
#                                            debugfs mounted for it, and
#                                            unmounted after if it was not)
#
# interleaved over ROUNDS rounds (default 5), and prints per configuration
# the median signals/s and the slowdown of the median against the
# baseline's, and how many lines of the workload each tracer printed (N + 1
# expected for tracekit, N for perf-tools, which sees kill() only).
#
# perf-tools runs wait for its lock (/var/tmp/.ftrace-lock) to be free, and
# are never SIGKILLed (that would leave its events enabled): each is given
# STOP_TIMEOUT (300) seconds to drain its awk after Ctrl-C. N is kept small
# enough for both tracers' buffers (at 200000, perf-tools loses most
# events).
#
# Summary row (SUMMARY=FILE, see bench/lib.sh): signals/s and time per
# signal of killsnoop and perf-tools' killsnoop, and the fewest lines of the
# workload each printed in a round; target: killsnoop printed every signal
# (N + 1) in every round.
#
# Environment: ROUNDS (5), N=20000, CONFIGS="baseline tracekit perftools".

set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname "$0")/../lib.sh"
quick ROUNDS=1 N=2000
ROUNDS=${1:-${ROUNDS:-5}}
N=${N:-20000}
CONFIGS=${CONFIGS:-baseline tracekit perftools}
posint ROUNDS "$ROUNDS"
posint N "$N"
need_root
bench_tmpdir killsnoop_overhead
KILLS=$REPO/build/workloads/kills
[[ -x $KILLS ]] || die "$KILLS missing: make tests"
WPID=""
stop_workload() { [[ -n $WPID ]] && { kill -KILL "$WPID" 2>/dev/null; wait "$WPID" 2>/dev/null; }; WPID=""; }
mounted=""
if [[ $CONFIGS == *perftools* ]] && ! mountpoint -q /sys/kernel/debug; then
  mount -t debugfs debugfs /sys/kernel/debug || die "cannot mount debugfs"
  mounted=1
fi

# perf_cat PID: the PID of perf-tools' "cat trace_pipe" under script PID (in
# its subshell), or nothing.
perf_cat() {
  local sub
  for sub in $1 $(ps -o pid= --ppid "$1"); do
    ps -o pid=,args= --ppid "$sub" | awk '$2 == "cat" && $3 == "trace_pipe" { print $1 }'
  done
}

# run_once CFG: prints "signals/s lines"
run_once() {
  local cfg=$1 fifo=$TMP/go rate lines=0 i
  rm -f "$fifo" && mkfifo "$fifo"
  exec 3<>"$fifo"
  "$KILLS" "$N" 0 0 <"$fifo" >"$TMP/w.out" &
  WPID=$!
  until grep -q waiting "$TMP/w.out"; do sleep 0.05; done
  case $cfg in
    tracekit) "$REPO/build/bin/killsnoop" >"$TMP/tracer.out" 2>"$TMP/tracer.err" & TPID=$! ;;
    perftools)
      for ((i = 0; i < 1200; i++)); do
        [[ -e /var/tmp/.ftrace-lock ]] || break
        sleep 0.25
      done
      /usr/sbin/killsnoop-perf >"$TMP/tracer.out" 2>"$TMP/tracer.err" &
      TPID=$!
      ;;
  esac
  if [[ -n $TPID ]]; then
    # Ready: its header printed, and (perf-tools) its cat reading trace_pipe.
    until grep -q "Ctrl-C" "$TMP/tracer.out" 2>/dev/null; do
      kill -0 "$TPID" 2>/dev/null || die "$cfg did not start: $(cat "$TMP/tracer.err")"
      sleep 0.05
    done
    [[ $cfg == perftools ]] && until [[ -n $(perf_cat "$TPID") ]]; do sleep 0.05; done
    sleep 0.5
  fi
  echo go >&3
  until grep -q 'done' "$TMP/w.out"; do sleep 0.05; done
  rate=$(awk -v n="$N" '/^elapsed/ { printf "%.0f", n / $2 }' "$TMP/w.out")
  if [[ -n $TPID ]]; then
    sleep 1
    # A background job of a script ignores SIGINT: perf-tools' cat gets
    # SIGTERM, after which the script ends its tracing (its trap).
    # shellcheck disable=SC2046  # one pid per word
    [[ $cfg == perftools ]] && kill -TERM $(perf_cat "$TPID") 2>/dev/null
    stop_pid "$TPID" "$STOP_TIMEOUT"
    TPID=""
    lines=$(grep -c " $WPID " "$TMP/tracer.out")
    grep -i "lost" "$TMP/tracer.err" >&2
  fi
  stop_workload
  exec 3>&-
  echo "$rate $lines"
}

declare -A rates lines_seen
for ((r = 1; r <= ROUNDS; r++)); do
  for cfg in $CONFIGS; do
    read -r rate lines < <(run_once "$cfg")
    log "round $r $cfg: $rate signals/s, $lines lines"
    rates[$cfg]+="$rate "
    lines_seen[$cfg]+="$lines "
  done
done
[[ -n $mounted ]] && umount /sys/kernel/debug
# shellcheck disable=SC2086
base=$(median 0 ${rates[baseline]:-})
for cfg in $CONFIGS; do
  # shellcheck disable=SC2086
  m=$(median 0 ${rates[$cfg]})
  if [[ -n $base && $cfg != baseline ]]; then
    awk -v c="$cfg" -v m="$m" -v b="$base" 'BEGIN { printf "%-10s %10d signals/s  %5.1f%% slower\n", c, m, (b - m) * 100 / b }'
  else
    printf "%-10s %10d signals/s\n" "$cfg" "$m"
  fi
done
# the summary row: signals/s, time per signal against the baseline's, and
# the fewest lines of the workload a tracer printed in a round
cell() { # cfg expected-lines
  [[ -n ${rates[$1]:-} ]] || { echo -; return; }
  local m few
  # shellcheck disable=SC2086
  m=$(median 0 ${rates[$1]})
  few=$(tr ' ' '\n' <<<"${lines_seen[$1]}" | grep . | sort -n | head -n 1)
  echo "$m signals/s${base:+, $(slowdown "$base" "$m") per signal}, printed >= $few of $2"
}
verdict=-
if [[ -n ${rates[tracekit]:-} ]]; then
  few=$(tr ' ' '\n' <<<"${lines_seen[tracekit]}" | grep . | sort -n | head -n 1)
  verdict=met
  ((few == N + 1)) || verdict="missed printed $few of $((N + 1))"
fi
summary_row "killsnoop, kill() loop${base:+ (untraced $base signals/s)}" "$(cell tracekit $((N + 1)))" - - \
  "$(cell perftools "$N")" "every signal printed" "$verdict"
