# shellcheck shell=bash
# Shared by the tracer overhead benchmarks (bench/*_overhead.sh). Sourced
# after `set -u -o pipefail`; defining functions and a few variables is all it
# does by itself.
#
# The script provides:
#   start_tracer CFG   start the tracer of configuration CFG in the background
#                      (stdout to $TMP/tracer.out, stderr to $TMP/tracer.err)
#                      and set TPID to its pid
#   tracer_ready CFG   true once the tracer $TPID is tracing (ready_perf and
#                      ready_bpftrace below cover perf record and bpftrace)
#   stop_workload      stop the workload processes it has running (EXIT trap)
#
# Environment read here: READY_TIMEOUT (30), STOP_TIMEOUT (300), TMPDIR,
# KEEP_TMP.

# shellcheck disable=SC2034  # used by the scripts
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BENCH_NAME=${0##*/}
BENCH_NAME=${BENCH_NAME%.sh}
READY_TIMEOUT=${READY_TIMEOUT:-30}
STOP_TIMEOUT=${STOP_TIMEOUT:-300}
TPID="" # tracer currently running (started by us)

usage() { sed -n '2,/^[^#]/{/^#/{s/^# \{0,1\}//;p}}' "$0"; } # the script's header comment
die() { echo "$BENCH_NAME: $*" >&2; exit 1; }
log() { echo "$*" >&2; }

# --- checks ------------------------------------------------------------------
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer (got '$2')"; }
# need_root: root, and tracefs mounted (mount_tracefs below).
need_root() {
  [[ $(id -u) -eq 0 ]] || die "must run as root"
  mount_tracefs
}
need_cmd() { command -v "$1" >/dev/null || die "$1 not found (apt-get install $2)"; } # cmd package

# poll_syscalls: set POLL_NRS and EPOLL_NRS, the syscall numbers a tracer
# blocks in when it is waiting for events; 1 on an architecture not listed
poll_syscalls() {
  case $(uname -m) in
    x86_64) POLL_NRS="7 271" EPOLL_NRS="232 281 441" ;;       # poll ppoll | epoll_wait epoll_pwait epoll_pwait2
    aarch64 | riscv64) POLL_NRS="73" EPOLL_NRS="22 441" ;;    # ppoll | epoll_pwait epoll_pwait2
    *) return 1 ;;
  esac
}

# --- temp dir, cleanup -------------------------------------------------------
# bench_tmpdir PREFIX: create the temp dir TMP and install the cleanup traps
bench_tmpdir() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX") || die "mktemp failed"
  trap cleanup EXIT
  trap 'log "interrupted"; exit 130' INT TERM
}

wait_line() { # file regex secs: true once file has a line matching regex
  local i
  for ((i = 0; i < $3 * 10; i++)); do grep -Eqs "$2" "$1" && return 0; sleep 0.1; done
  return 1
}

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
  stop_workload
  [[ -n $TPID ]] && stop_pid "$TPID" 30
  if [[ -n ${KEEP_TMP:-} ]]; then log "temp dir kept: $TMP"; else rm -rf "$TMP"; fi
}

# copy_tool PATH NAME: copy the binary PATH resolves to into $TMP, under its
# own name, and make it $TMP/NAME (a symlink if the names differ: tracekit
# picks the tool by argv[0]), so that a rebuild during the run does not
# change what is measured; then check that it runs.
copy_tool() {
  local bin
  bin=$(readlink -f "$1") || die "cannot resolve $1"
  cp "$bin" "$TMP/$(basename "$bin")" || die "cannot copy $bin"
  [[ $(basename "$bin") == "$2" ]] || ln -s "$(basename "$bin")" "$TMP/$2"
  "$TMP/$2" -h >/dev/null 2>&1 || die "$1 -h fails"
}

# --- tracefs state (to check it is left as found) ----------------------------
TRACEFS=/sys/kernel/tracing
[[ -e $TRACEFS/events ]] || TRACEFS=/sys/kernel/debug/tracing
# mount_tracefs: on a machine where nothing has mounted tracefs yet (a fresh
# boot), mount it at /sys/kernel/tracing, as the tools do on their first run
# (lib/tracefs/tracing_dir.cpp): the scripts read TRACEFS before any tool runs
# (the state to leave as found, tracepoint ids and lists).
mount_tracefs() {
  [[ -e /sys/kernel/tracing/events || -e /sys/kernel/debug/tracing/events ]] && return
  mount -t tracefs nodev /sys/kernel/tracing || die "cannot mount tracefs at /sys/kernel/tracing"
  TRACEFS=/sys/kernel/tracing
}
tracefs_state() {
  local f
  [[ -d $TRACEFS ]] || { echo "no tracefs"; return; }
  echo "instances: $(find "$TRACEFS/instances" -mindepth 1 -maxdepth 1 -printf '%f ' 2>/dev/null | tr ' ' '\n' | sort | tr '\n' ' ')"
  for f in kprobe_events uprobe_events dynamic_events set_event tracing_on current_tracer; do
    [[ -r $TRACEFS/$f ]] && { echo "== $f"; cat "$TRACEFS/$f" 2>/dev/null; }
  done
}

# tracefs_report BEFORE AFTER: tracefs_state before and after the run
tracefs_report() {
  local before=$1 after=$2 w pid
  if [[ $before == "$after" ]]; then
    echo "tracefs: unchanged (instances, kprobe/uprobe/dynamic events, set_event, tracing_on, current_tracer)"
    return
  fi
  # a difference normally comes from something else running on the machine
  # (perf record and bpftrace do not write to tracefs; tracekit removes what
  # it creates)
  echo "tracefs: CHANGED during the run (by this run or by another process):"
  diff <(echo "$before") <(echo "$after") | sed 's/^/  /'
  # tracekit names its instances/groups tracekit_<pid>[_n]: say whose they are
  for w in $after; do
    [[ $w =~ ^tracekit_([0-9]+) ]] || continue
    pid=${BASH_REMATCH[1]}
    if [[ -r /proc/$pid/cmdline ]]; then
      echo "  $w: belongs to running pid $pid ($(tr '\0' ' ' </proc/"$pid"/cmdline | cut -c1-80)), not started by this script"
    fi
  done
}

# --- tracer readiness ----------------------------------------------------------
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

# ready_perf: $TPID holds perf_event fds and its main thread is blocked in
# poll/ppoll (perf record enables its events before it first polls)
ready_perf() { (($(perf_fds "$TPID") > 0)) && in_list "$(main_syscall "$TPID")" "$POLL_NRS"; }
# ready_bpftrace: "Attaching N probes..." printed, perf_event fds open, main
# thread blocked in epoll_wait (or poll)
ready_bpftrace() {
  grep -q '^Attaching ' "$TMP/tracer.out" 2>/dev/null && (($(perf_fds "$TPID") > 0)) &&
    in_list "$(main_syscall "$TPID")" "$EPOLL_NRS $POLL_NRS"
}

# wait_ready CFG: 0 when the tracer $TPID is tracing, 1 if it died or timed out.
wait_ready() {
  local cfg=$1 deadline
  deadline=$(($(now_ms) + READY_TIMEOUT * 1000))
  while (($(now_ms) < deadline)); do
    kill -0 "$TPID" 2>/dev/null || return 1
    tracer_ready "$cfg" && return 0
    sleep 0.02
  done
  return 1
}

tracer_error() { # first meaningful line of the tracer's stderr
  local l
  l=$(grep -v -e RLIMIT_MEMLOCK -e '^$' "$TMP/tracer.err" | grep -m1 -i -e error -e fail -e cannot -e 'not ')
  [[ -n $l ]] || l=$(grep -v '^$' "$TMP/tracer.err" | tail -n 1)
  echo "${l:-exited before it was tracing}"
}

# run_traced CFG DURING CMD [ARG...]: start the tracer of CFG, run CMD in this
# shell (no subshell: the pids it starts stay visible to cleanup) once the
# tracer is tracing, then stop the tracer with SIGINT and wait for it.
# Returns 0; 1 if the tracer never got to tracing (CMD not run); 2 if it
# exited while CMD ran. TRACER_ERR then says why ("tracer exited during
# DURING: ...").
run_traced() {
  local cfg=$1 during=$2 rc=0
  shift 2
  # shellcheck disable=SC2034  # TRACER_ERR: for the caller
  TRACER_ERR=""
  start_tracer "$cfg"
  if ! wait_ready "$cfg"; then
    stop_pid "$TPID" 10; TPID=""
    TRACER_ERR=$(tracer_error)
    return 1
  fi
  "$@"
  if ! kill -0 "$TPID" 2>/dev/null; then
    # shellcheck disable=SC2034
    TRACER_ERR="tracer exited during $during: $(tracer_error)"; rc=2
    wait "$TPID" 2>/dev/null
  else
    stop_pid "$TPID" "$STOP_TIMEOUT"
  fi
  TPID=""
  return "$rc"
}

# --- lost events (after the tracer exited) -------------------------------------
sum_matches() { # sed-regex-with-one-group file -> sum of the captured numbers
  sed -n "s/$1/\\1/p" "$2" | awk '{s += $1} END {print s + 0}'
}

# lost_bpftrace -> "LOST<TAB>NOTES": "Lost N events" (absent = 0); failed
# stack-id lookups go in the notes
lost_bpftrace() {
  local err=$TMP/tracer.err lost n notes=""
  lost=$(grep -o 'Lost [0-9]* events' "$err" "$TMP/tracer.out" 2>/dev/null | awk '{s+=$2} END{print s+0}')
  n=$(grep -c 'failed to look up stack id' "$err")
  ((n)) && notes+="stackid_errors=$n "
  printf '%s\t%s\n' "$lost" "${notes% }"
}

perf_stats() { perf report -i "$TMP/perf.data" --stats 2>&1; }

# lost_perf STATS -> "LOST<TAB>NOTES" for $TMP/perf.data, STATS its
# perf_stats: the lost-sample counts (LOST_SAMPLES), else the sum of the
# PERF_RECORD_LOST records; their number goes in the notes (lost_chunks)
lost_perf() {
  local stats=$1 lost chunks notes=""
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
  printf '%s\t%s\n' "$lost" "${notes% }"
}

# --- rounds, load ----------------------------------------------------------------
# round_order ROUND CFG...: ORDER = the CFGs rotated by ROUND - 1 and reversed
# every other cycle, so that no configuration always follows the same one
round_order() {
  local r=$1 n i off rev=()
  shift
  local cfgs=("$@")
  n=${#cfgs[@]}
  ORDER=()
  off=$(((r - 1) % n))
  for ((i = 0; i < n; i++)); do ORDER+=("${cfgs[(off + i) % n]}"); done
  if ((((r - 1) / n) % 2)); then # reverse every other cycle
    for ((i = n - 1; i >= 0; i--)); do rev+=("${ORDER[i]}"); done; ORDER=("${rev[@]}")
  fi
}

load_line() { echo "loadavg $(cut -d' ' -f1-3 /proc/loadavg)"; }
busy_procs() { # processes using >= 10% CPU (not ours)
  ps -eo pid=,pcpu=,comm= --sort=-pcpu | awk -v me=$$ '$1 != me && $2 >= 10 {printf "%s(%s, %s%%) ", $3, $1, $2}'
}
load_start() { # START_LOAD, START_BUSY; logged
  START_LOAD=$(load_line)
  START_BUSY=$(busy_procs)
  log "start: $START_LOAD; busy: ${START_BUSY:-none}"
}
load_end() { END_LOAD=$(load_line); END_BUSY=$(busy_procs); }
load_summary() {
  echo "load: start $START_LOAD (busy: ${START_BUSY:-none}); end $END_LOAD (busy: ${END_BUSY:-none})"
}

# --- summary -------------------------------------------------------------------
stats() { # decimals values... -> "median min max count" ("- - - 0" for none)
  local d=$1
  shift
  printf '%s\n' "$@" | sort -g | awk -v f="%.${d}f" 'NF {v[++n] = $1} END {
    if (n == 0) { print "- - - 0"; exit }
    m = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
    printf f " " f " " f " %d\n", m, v[1], v[n], n }'
}
median() { # decimals values... -> the median, nothing for no values
  local m
  read -r m _ <<<"$(stats "$@")"
  [[ $m == - ]] || echo "$m"
}
# paired A B: rounds as "ROUND:VALUE ..." lists (one config's values each,
# from the same interleaved rounds) -> "BELOW N MEDIAN": of the N rounds in
# which both ran, the number in which A's value was below B's, and the
# median of A minus B over them. A round's runs are close in time, so a
# slow hour of the machine weighs on both, and a slow run, which can flip
# the order of two medians, counts as one round of N here.
paired() {
  awk -v a="$1" -v b="$2" 'BEGIN {
    nb = split(b, bs, " "); for (i = 1; i <= nb; i++) { split(bs[i], kv, ":"); bv[kv[1]] = kv[2] }
    na = split(a, as, " ")
    for (i = 1; i <= na; i++) {
      split(as[i], kv, ":")
      if (!(kv[1] in bv)) continue
      d[++n] = kv[2] - bv[kv[1]]; if (d[n] < 0) below++
    }
    if (n == 0) { print "0 0 -"; exit }
    for (i = 2; i <= n; i++) { x = d[i]; for (j = i - 1; j >= 1 && d[j] > x; j--) d[j + 1] = d[j]; d[j + 1] = x }
    m = (n % 2) ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
    printf "%d %d %.6g\n", below, n, m }'
}
slowdown() { # value base -> "1.23x (+23%)"
  awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2fx (%+.0f%%)", a / b, (a / b - 1) * 100}'
}
sum_notes() { # "k=v k=v;k=v;" -> "k=sum ..."
  tr ';[:blank:]' '\n' <<<"$1" | awk -F= 'NF == 2 {s[$1] += $2; if (!($1 in o)) o[$1] = ++n}
    END {for (k in o) out[o[k]] = k "=" s[k]; for (i = 1; i <= n; i++) printf "%s%s", (i > 1 ? " " : ""), out[i]}'
}

# --- the make bench summary ----------------------------------------------------
# summary_row LABEL TRACEKIT BPFTRACE PERF PERFTOOLS TARGET VERDICT: one row
# of the summary table `make bench` prints (bench/run), and of the record it
# appends to bench/results/runs.jsonl. Appended, tab-separated, after the
# part's name (BENCH_PART, set by bench/run; else the script's name), to the
# file $SUMMARY names; nothing when SUMMARY is unset (a script run by hand).
# Each figure cell carries its unit. Use "-" for a cell that does not apply.
# VERDICT is "met", "missed" or "-" (no target), and may add a reason after
# a space ("missed kernel floor 0.9 us").
summary_row() {
  [[ -n ${SUMMARY:-} ]] || return 0
  (($# == 7)) || die "summary_row needs 7 cells (got $#)"
  local IFS=$'\t'
  echo "${BENCH_PART:-$BENCH_NAME}"$'\t'"$*" >>"$SUMMARY"
}

# --- quick runs -------------------------------------------------------------------
# quick VAR=VALUE...: with BENCH_QUICK=1, the short settings with which the
# part proves that it runs (bench/run, make bench BENCH_QUICK=1; its figures
# mean nothing): each VAR the environment has not set takes VALUE. Called
# before the part reads its settings.
quick() {
  [[ ${BENCH_QUICK:-0} == 1 ]] || return 0
  local kv name
  for kv in "$@"; do
    name=${kv%%=*}
    [[ -n ${!name:-} ]] || printf -v "$name" '%s' "${kv#*=}"
  done
}
