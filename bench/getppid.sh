# shellcheck shell=bash
# The getppid loop that bench/parts/stackcount_overhead.sh and bench/parts/throughput.sh
# run under their tracers, and what both do with stackcount. Sourced after
# lib.sh, once the script has set TMP (bench_tmpdir) and BENCH_CPU; defining
# functions and a few variables is all it does by itself.
#
# Environment read here: SYSCALL (getppid: the system call the loop makes and
# whose syscalls:sys_enter_SYSCALL tracepoint is traced; another one taking no
# arguments, such as getpgrp, keeps the run apart from other tracers of
# getppid on a shared machine), QEMU_WAIT (600).

SYSCALL=${SYSCALL:-getppid}
QEMU_WAIT=${QEMU_WAIT:-600}
[[ $SYSCALL =~ ^[a-z0-9_]+$ ]] || die "SYSCALL must be a system call name (got '$SYSCALL')"
[[ $QEMU_WAIT =~ ^[0-9]+$ ]] || die "QEMU_WAIT must be a number of seconds (got '$QEMU_WAIT')"
TP=syscalls:sys_enter_$SYSCALL
LOOP_FN=bench_getppid_loop # the loop's function, in user stacks
BPIDS=()                   # loop processes currently running (started by us)
SC_PIDS=()                 # every stackcount pid started (their instances must be gone)

# stop_workload: the loops still running (the EXIT trap's)
# shellcheck disable=SC2317  # invoked from cleanup
stop_workload() {
  local p
  for p in "${BPIDS[@]}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}

# loop_setup: check the tools the loop needs, find BENCH_CPU among the online
# CPUs (ONLINE, CPU_IDX), compile bench/src/getppid_loop.c into $TMP/getppid_loop
loop_setup() {
  need_cmd taskset util-linux
  need_cmd gcc gcc
  [[ $BENCH_CPU =~ ^[0-9]+$ ]] || die "BENCH_CPU must be a CPU number (got '$BENCH_CPU')"
  [[ $(uname -m) == x86_64 ]] ||
    die "unsupported architecture $(uname -m): the loop uses the x86-64 syscall instruction"
  [[ -e $TRACEFS/events/syscalls/sys_enter_$SYSCALL ]] || die "no tracepoint $TP"
  mapfile -t ONLINE < <(awk -F, '{for (i = 1; i <= NF; i++) {n = split($i, r, "-"); if (n == 1) print r[1]; else for (c = r[1]; c <= r[2]; c++) print c}}' /sys/devices/system/cpu/online)
  CPU_IDX=-1
  local i
  for i in "${!ONLINE[@]}"; do [[ ${ONLINE[i]} == "$BENCH_CPU" ]] && CPU_IDX=$i; done
  ((CPU_IDX >= 0)) || die "CPU $BENCH_CPU is not online"
  gcc -O2 -fno-omit-frame-pointer -DLOOP_NR="SYS_$SYSCALL" -o "$TMP/getppid_loop" \
    "$REPO/bench/src/getppid_loop.c" || die "cannot compile the loop (SYSCALL=$SYSCALL)"
  "$TMP/getppid_loop" 10 >/dev/null || die "the loop does not run"
}

# run_loop NPROD CALLS RATE -> MADE (sum of calls), NSPC and CPUPC (elapsed
# and CPU ns/call of the first producer), ACH (calls made / longest elapsed,
# events/s), LPIDS; MADE empty on failure. No subshell: BPIDS stays visible
# to cleanup.
# shellcheck disable=SC2034  # MADE NSPC CPUPC ACH LPIDS: for the caller
run_loop() {
  local nprod=$1 calls=$2 rate=$3 i cpu rc ok=1 maxns=0 ns cns
  MADE="" NSPC="" CPUPC="" ACH="" LPIDS=""
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
    read -r c ns p cns < <(awk '/^calls / {print $2, $4, $10, $12}' "$TMP/loop.$i.out")
    [[ -n ${cns:-} ]] || { log "  loop printed no result"; return; }
    made=$((made + c)); pids+="$p "; ((ns > maxns)) && maxns=$ns
    if ((i == 0)); then
      NSPC=$(awk -v n="$ns" -v c="$c" 'BEGIN {printf "%.1f", n / c}')
      CPUPC=$(awk -v n="$cns" -v c="$c" 'BEGIN {printf "%.1f", n / c}')
    fi
  done
  MADE=$made LPIDS=${pids% }
  ACH=$(awk -v c="$made" -v n="$maxns" 'BEGIN {printf "%.0f", c * 1e9 / n}')
}

# sc_lost -> "LOST<TAB>NOTES" of the stackcount run that wrote $TMP/tracer.err
sc_lost() {
  local err=$TMP/tracer.err lost notes="" n
  lost=$(sum_matches '^WARNING: \([0-9]*\) events lost.*' "$err")
  n=$(sum_matches '^WARNING: \([0-9]*\) stack traces could not be displayed.*' "$err")
  ((n)) && notes+="stacks_missing=$n "
  n=$(sum_matches '^WARNING: \([0-9]*\) events dropped: the key table.*' "$err")
  ((n)) && notes+="key_table_dropped=$n "
  grep -q '^WARNING: kernel symbols unavailable' "$err" && notes+="no_ksyms=1 "
  printf '%s\t%s\n' "$lost" "${notes% }"
}

# sc_counted USER -> "COUNTED OURS" of stackcount's output in $TMP/tracer.out:
# records are paragraphs, frames ("  fn") then the count ("    N"); OURS (the
# stacks through the loop's function) when USER is 1, else -
sc_counted() {
  awk -v RS= -v fn="$LOOP_FN" -v user="$1" '
    { n = split($0, L, "\n"); if (L[n] ~ /^    [0-9]+$/) { c = L[n] + 0; tot += c
        if (index($0, "  " fn "\n")) own += c } }
    END { print tot + 0, (user == 1 ? own + 0 : "-") }' "$TMP/tracer.out"
}

# perf_samples STATS -> the SAMPLE count of perf_stats output STATS
perf_samples() {
  awk '/stats:$/ {per = ($0 !~ /Aggregated/)} per && /^ *SAMPLE events:/ {s += $3; seen = 1}
       END {print seen ? s : 0}' <<<"$1"
}

# verdict MADE COUNTED OURS LOST -> "ok" or what is wrong (nothing lost means
# every call of ours was counted)
verdict() {
  local made=$1 counted=$2 ours=$3 lost=$4
  if ((lost > 0)); then echo "lost"
  elif [[ $ours != - ]]; then ((ours == made)) && echo ok || echo "ours!=made"
  else ((counted >= made)) && echo ok || echo "counted<made"
  fi
}

# instances / groups named after a pid that we started (tracekit_<pid>[_n])
our_instances() {
  local pids=" $* " w
  while IFS= read -r w; do
    [[ $w =~ ^tracekit_([0-9]+) && $pids == *" ${BASH_REMATCH[1]} "* ]] && echo "$w"
  done < <(find "$TRACEFS/instances" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null)
}

# instances_report: what the script's stackcount runs left in tracefs
instances_report() {
  local left
  left=$(our_instances "${SC_PIDS[@]}")
  if [[ -n $left ]]; then
    echo "tracefs: instances of stackcount runs of this script are LEFT: ${left//$'\n'/ }"
  elif ((${#SC_PIDS[@]})); then
    echo "tracefs: none of the ${#SC_PIDS[@]} stackcount runs left an instance behind"
  fi
}

# other_tracers -> the tracefs instances (and the top level) that have $TP
# enabled now: another tracer of the same event adds its cost to every
# configuration, the baseline included
other_tracers() {
  local f d out=""
  for f in "$TRACEFS"/events/syscalls/sys_enter_"$SYSCALL"/enable \
    "$TRACEFS"/instances/*/events/syscalls/sys_enter_"$SYSCALL"/enable; do
    [[ -r $f && $(cat "$f" 2>/dev/null) == *1* ]] || continue
    d=${f%/events/*}
    out+="${d#"$TRACEFS"/} "
  done
  echo "${out% }"
}

qemu_pids() { pgrep -f '^[^ ]*qemu-system' 2>/dev/null | tr '\n' ' '; }

# qemu_wait: other engineers' VMs make the numbers meaningless: wait for
# them (QEMU_WAIT seconds at most); QEMU_NOTE says what happened
qemu_wait() {
  local q waited=0
  QEMU_NOTE=""
  q=$(qemu_pids)
  [[ -n $q ]] || return 0
  if ((QEMU_WAIT > 0)); then
    log "qemu-system running (pids $q): waiting up to ${QEMU_WAIT}s for it to end"
    while [[ -n $(qemu_pids) ]] && ((waited < QEMU_WAIT)); do sleep 30; waited=$((waited + 30)); done
    q=$(qemu_pids)
    if [[ -n $q ]]; then QEMU_NOTE="qemu-system still running after ${waited}s (pids $q): numbers are noisy"
    else QEMU_NOTE="waited ${waited}s for qemu-system to end"; fi
  else
    QEMU_NOTE="qemu-system running (pids $q): numbers are noisy"
  fi
  log "$QEMU_NOTE"
}

# run_start LINE CSV_HEADER: wait for VMs (qemu_wait), snapshot tracefs
# (TRACEFS_BEFORE), log LINE and the load, start the RESULTS file
# shellcheck disable=SC2034  # TRACEFS_BEFORE: for the caller
run_start() {
  qemu_wait
  TRACEFS_BEFORE=$(tracefs_state)
  log "$1"
  load_start
  [[ -z ${RESULTS:-} ]] || echo "$2" >"$RESULTS"
}
# csv FIELD...: one line of the RESULTS file (nothing without RESULTS)
csv() { [[ -z ${RESULTS:-} ]] || (IFS=,; echo "$*") >>"$RESULTS"; }
