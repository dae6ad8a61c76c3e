#!/bin/bash
# bench/parts/startup.sh: how long each tracekit tool takes from exec to its ready
# line, and from SIGINT to its exit, beside bpftrace and perf doing the same
# job on the same event; then the same for a glob of 300+ tracepoints,
# beside the kernel's own cost of enabling and disabling those events.
#
#   sudo bench/parts/startup.sh             # 3 rounds (or RUNS=N, or an argument)
#   sudo PARTS=tools bench/parts/startup.sh
#   sudo TOOLS="stackcount-K tpoint" TRACERS=tracekit bench/parts/startup.sh 9
#
# A small C timer (compiled into the temp dir) forks the tracer with stdout
# and stderr on one pipe and takes the time from fork to the moment the
# tracer is ready: its ready line seen (tracekit: the tool's header, per
# TOOLS.md; bpftrace: "Attaching N probes...") and, for bpftrace and perf,
# its main thread blocked in poll/epoll_wait holding perf_event fds (both
# print before they attach, or print nothing). WAIT_MS later it sends
# SIGINT and takes the time to the exit (the report included). Nothing is
# run as a workload: the machine's own events flow.
#
# Part "tools": every tool tracekit lists (ALL_TOOLS below: adding a tool
# needs no edit here), on one event (syscalls:sys_enter_getppid where the
# tool takes an event: TOOL_ARGS), with bpftrace's and perf record's or perf
# stat's equivalent where there is one (tool_cmd); a tool this kernel cannot
# run (`tracekit features`) gets a row with the reason. Configurations are interleaved (round_order) and each prints
# the median (min-max) over RUNS.
# Part "many": stackcount -K, stackcount (perf backend) and funccount on
# 't:syscalls:sys_enter_*' (360 tracepoints here), bpftrace on
# tracepoint:syscalls:sys_enter_*, perf stat -e 'syscalls:sys_enter_*',
# MANY_RUNS times each; and the kernel's own cost, measured by hand: in a
# fresh instance, writing 1 then 0 to every sys_enter_* event's enable file,
# and removing the instance.
#
# A tracer still running STOP_LIMIT ms after its SIGINT (bpftrace printing
# user stacks can take minutes) is killed, and counted as STOP_LIMIT.
#
# Environment: RUNS (3), WAIT_MS (200: ready to SIGINT), STOP_LIMIT (10000), PARTS ("tools
# many"), TOOLS (the tools part's tools: every tool tracekit lists, see
# ALL_TOOLS), TRACERS ("tracekit bpftrace perf"), MANY_RUNS (1), READY_TIMEOUT (30 s; 120 for many),
# TRACEKIT (build/bin/tracekit, copied first), TMPDIR, KEEP_TMP=1,
# SUMMARY=FILE (rows for the make bench summary).
# Takes about 3 minutes with the defaults, half of it bpftrace and perf
# detaching from 360 tracepoints.

set -u -o pipefail
# shellcheck source=SCRIPTDIR/../lib.sh
. "$(dirname "$0")/../lib.sh"

[[ ${1:-} == -h || ${1:-} == --help ]] && { usage; exit 0; }
quick RUNS=1
RUNS=${RUNS:-${1:-3}}
WAIT_MS=${WAIT_MS:-200}
PARTS=${PARTS:-tools many}
TRACERS=${TRACERS:-tracekit bpftrace perf}
MANY_RUNS=${MANY_RUNS:-1}
STOP_LIMIT=${STOP_LIMIT:-10000} # ms after SIGINT, then SIGKILL (counted as this)
STOP_NOTE=""                   # configurations killed that way
posint RUNS "$RUNS"
posint WAIT_MS "$WAIT_MS"
posint MANY_RUNS "$MANY_RUNS"
need_root
need_cmd gcc gcc
poll_syscalls || die "unsupported architecture $(uname -m)"
EVENT=syscalls:sys_enter_getppid
MANY_GLOB='syscalls:sys_enter_*'

bench_tmpdir startup
stop_workload() { :; }
copy_tool "${TRACEKIT:-$REPO/build/bin/tracekit}" tracekit

# The tools: those tracekit lists (its usage, run without arguments), in its
# order, so that a new tool needs no edit here; stackcount twice, with -K
# (the ftrace backend) and without. Not timed: the tools that do their job
# and exit (reset-tracing and reset-ftrace, which also remove what killed
# runs left).
NOT_TIMED="reset-tracing reset-ftrace"
ALL_TOOLS=$("$TMP/tracekit" 2>&1 | awk '/^ *tools:/ {t = 1; next} /^ *[a-z]+:$/ {t = 0}
  t && NF {print $1; if ($1 == "stackcount") print "stackcount-K"}' | tr '\n' ' ')
[[ -n $ALL_TOOLS ]] || die "tracekit listed no tools"
TOOLS=${TOOLS:-$(for t in $ALL_TOOLS; do in_list "$t" "$NOT_TIMED" || echo "$t"; done | tr '\n' ' ')}
# The arguments of the tools that need some: the event EVENT where the tool
# takes an event, else a common function. A tool not listed runs without.
declare -A TOOL_ARGS=(
  [stackcount-K]="-K t:$EVENT" [stackcount]="t:$EVENT" [stacksnoop]="t:$EVENT" [tpoint]="$EVENT"
  [funccount]="t:$EVENT" [uprobe]="p:libc:getppid" [kprobe]="p:do_sys_openat2"
  [funcslower]="vfs_read 10" [functrace]="vfs_read" [funcgraph]="vfs_read")
# The tools this kernel cannot run, with the reason: `tracekit features`,
# each tool's default row ("TOOL  -  no: needs kprobes").
FEATURES=$("$TMP/tracekit" features 2>/dev/null) || die "tracekit features failed"
unavailable() { sed -En "s/^${1%-K} +- +no: (.*)/\1/p" <<<"$FEATURES" | head -n 1; }

cat >"$TMP/startlat.c" <<'EOF'
/* startlat: time a tracer's start-up and teardown.
 * startlat [-r REGEX] [-s NRS] [-t TIMEOUT_MS] [-w WAIT_MS] [-o FILE] -- CMD [ARG...]
 * Runs CMD with stdout and stderr on one pipe (copied to FILE), and prints
 * "READY_MS STOP_MS STATUS": READY_MS from fork to the first moment its
 * output has a line matching REGEX (extended, if given) and (if -s) its main
 * thread is blocked in one of the syscalls NRS (comma-separated numbers)
 * holding at least one perf_event fd; then WAIT_MS later a SIGINT, and
 * STOP_MS from the SIGINT to the exit. "timeout" or "died" instead of
 * READY_MS if it never got ready; ">K" for STOP_MS when it had not exited
 * K ms after the SIGINT (-k, then SIGKILL). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int perf_fds(pid_t pid) {
  char path[64], link[64];
  snprintf(path, sizeof path, "/proc/%d/fd", pid);
  DIR *d = opendir(path);
  if (!d) return 0;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    char fp[320];
    snprintf(fp, sizeof fp, "%s/%s", path, e->d_name);
    ssize_t k = readlink(fp, link, sizeof link - 1);
    if (k > 0) { link[k] = 0; if (!strcmp(link, "anon_inode:[perf_event]")) n++; }
  }
  closedir(d);
  return n;
}

static int blocked_in(pid_t pid, const char *nrs) {
  char path[64], buf[64];
  snprintf(path, sizeof path, "/proc/%d/syscall", pid);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  ssize_t k = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (k <= 0) return 0;
  buf[k] = 0;
  long nr = strtol(buf, NULL, 10);
  char list[256];
  snprintf(list, sizeof list, "%s", nrs);
  for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
    if (strtol(t, NULL, 10) == nr) return perf_fds(pid) > 0;
  return 0;
}

int main(int argc, char **argv) {
  const char *re = NULL, *nrs = NULL, *out = "/dev/null";
  double timeout = 30000, wait = 100, stop_limit = 1e12;
  int c;
  while ((c = getopt(argc, argv, "+r:s:t:w:o:k:")) != -1) switch (c) {
      case 'r': re = optarg; break;
      case 's': nrs = optarg; break;
      case 't': timeout = atof(optarg); break;
      case 'w': wait = atof(optarg); break;
      case 'o': out = optarg; break;
      case 'k': stop_limit = atof(optarg); break;
      default: return 2;
    }
  if (optind >= argc) return 2;
  regex_t rx;
  if (re && regcomp(&rx, re, REG_EXTENDED | REG_NOSUB)) return 2;
  int of = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int p[2];
  if (of < 0 || pipe2(p, O_CLOEXEC)) return 1;
  double t0 = now_ms();
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 1); dup2(p[1], 2);
    execvp(argv[optind], argv + optind);
    _exit(127);
  }
  close(p[1]);
  int pfd = syscall(SYS_pidfd_open, pid, 0);
  char line[8192];
  size_t len = 0;
  int matched = re == NULL, eof = 0, exited = 0, status = 0;
  double ready = -1, sent = -1, gone = -1;
  for (;;) {
    struct pollfd f[2] = {{p[0], POLLIN, 0}, {pfd, POLLIN, 0}};
    poll(f, 2, 1);
    if (!eof && (f[0].revents & (POLLIN | POLLHUP))) {
      char buf[4096];
      ssize_t k = read(p[0], buf, sizeof buf);
      if (k <= 0) eof = 1;
      for (ssize_t i = 0; i < k; i++) {
        if (write(of, buf + i, 1) < 0) {}
        if (buf[i] == '\n' || len == sizeof line - 1) {
          line[len] = 0;
          if (!matched && !regexec(&rx, line, 0, NULL, 0)) matched = 1;
          len = 0;
        } else line[len++] = buf[i];
      }
    }
    if (!exited && (f[1].revents & POLLIN)) {
      waitpid(pid, &status, 0);
      exited = 1;
      gone = now_ms();
    }
    double t = now_ms();
    if (ready < 0) {
      if (exited) { printf("died - %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)); return 0; }
      if (len && !matched && re) { line[len] = 0; if (!regexec(&rx, line, 0, NULL, 0)) matched = 1; }
      if (matched && (!nrs || blocked_in(pid, nrs))) ready = t;
      else if (t - t0 > timeout) { kill(pid, SIGKILL); waitpid(pid, NULL, 0); printf("timeout - -\n"); return 0; }
    } else if (sent < 0 && t - ready >= wait) {
      kill(pid, SIGINT);
      sent = now_ms();
    } else if (sent >= 0 && !exited && t - sent > stop_limit) {
      kill(pid, SIGKILL);
      waitpid(pid, NULL, 0);
      printf("%.1f >%.0f killed\n", ready - t0, stop_limit);
      return 0;
    }
    if (exited && sent >= 0) break;
    if (exited) { printf("%.1f died %d\n", ready - t0, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status)); return 0; }
  }
  printf("%.1f %.1f %d\n", ready - t0, gone - sent, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return 0;
}
EOF
gcc -O2 -Wall -o "$TMP/startlat" "$TMP/startlat.c" || die "cannot compile the timer"

# tool_cmd TOOL TRACER: CMD (the command), RX (ready line regex, "" for
# none) and NRS (syscalls it waits in when ready, "" for no such check);
# false when TRACER has no equivalent of TOOL.
tool_cmd() {
  local tool=$1 tracer=$2 bt="" ev=$EVENT
  CMD=() RX="" NRS=""
  case $tracer in
    tracekit)
      # ready: the tool's header (TOOLS.md), its "Ctrl-C" line, or the
      # column header of the snoops that print no such line (TIME ...);
      # a snoop writes its "Tracing ..." line and its column header at once
      ln -sf tracekit "$TMP/${tool%-K}"
      read -r -a CMD <<<"$TMP/${tool%-K} ${TOOL_ARGS[$tool]:-}"
      RX='Ctrl-C|^TIME' ;;
    bpftrace)
      local tp="tracepoint:${ev/:/:}"
      case $tool in
        profile) bt='profile:hz:49 { @[kstack, ustack, comm] = count(); }' ;;
        offcputime) bt='tracepoint:sched:sched_switch { @[kstack, ustack, comm] = count(); }' ;;
        stackcount-K) bt="$tp { @[kstack] = count(); }" ;;
        stackcount) bt="$tp { @[kstack, ustack] = count(); }" ;;
        stacksnoop) bt="$tp { printf(\"%s\\n\", kstack); }" ;;
        tpoint) bt="$tp { printf(\"%s %d\\n\", comm, pid); }" ;;
        uprobe) bt='uprobe:libc:getppid { printf("%s %d\n", comm, pid); }' ;;
        execsnoop) bt='tracepoint:syscalls:sys_enter_execve { printf("%d %s\n", pid, str(args->filename)); }' ;;
        opensnoop) bt='tracepoint:syscalls:sys_enter_openat { printf("%s %d %s\n", comm, pid, str(args->filename)); }' ;;
        killsnoop) bt='tracepoint:syscalls:sys_enter_kill { printf("%s %d %d %d\n", comm, pid, args->pid, args->sig); }' ;;
        syscount) bt='tracepoint:raw_syscalls:sys_enter { @[args->id] = count(); }' ;;
        iosnoop) bt='tracepoint:block:block_rq_issue { @s[args->dev, args->sector] = nsecs; }
          tracepoint:block:block_rq_complete { printf("%d %d\n", args->dev, args->sector); }' ;;
        iolatency) bt='tracepoint:block:block_rq_issue { @s[args->dev, args->sector] = nsecs; }
          tracepoint:block:block_rq_complete { @ = hist((nsecs - @s[args->dev, args->sector]) / 1000000); }' ;;
        bitesize) bt='tracepoint:block:block_rq_issue { @ = hist(args->bytes); }' ;;
        tcpretrans) bt='tracepoint:tcp:tcp_retransmit_skb { printf("%d\n", pid); }' ;;
        funccount) bt="$tp { @ = count(); }" ;;
        *) return 1 ;;
      esac
      CMD=(bpftrace -e "$bt"); RX='^Attaching'; NRS="$EPOLL_NRS $POLL_NRS" ;;
    perf)
      local rec=(perf record -N -q -a -o "$TMP/perf.data") st=(perf stat -a -o "$TMP/perf.stat")
      case $tool in
        profile) CMD=("${rec[@]}" -F 49 -g) ;;
        offcputime) CMD=("${rec[@]}" -g -e sched:sched_switch) ;;
        stackcount-K | stackcount | stacksnoop) CMD=("${rec[@]}" -g -e "$ev") ;;
        tpoint) CMD=("${rec[@]}" -e "$ev") ;;
        execsnoop) CMD=("${rec[@]}" -e syscalls:sys_enter_execve) ;;
        opensnoop) CMD=("${rec[@]}" -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat) ;;
        killsnoop) CMD=("${rec[@]}" -e syscalls:sys_enter_kill -e syscalls:sys_exit_kill) ;;
        iosnoop) CMD=("${rec[@]}" -e block:block_rq_issue -e block:block_rq_complete) ;;
        tcpretrans) CMD=("${rec[@]}" -e tcp:tcp_retransmit_skb) ;;
        syscount) CMD=("${st[@]}" -e raw_syscalls:sys_enter) ;;
        iolatency) CMD=("${st[@]}" -e block:block_rq_issue -e block:block_rq_complete) ;;
        bitesize) CMD=("${st[@]}" -e block:block_rq_issue) ;;
        funccount) CMD=("${st[@]}" -e "$ev") ;;
        *) return 1 ;;
      esac
      NRS=$POLL_NRS ;;
    *) return 1 ;;
  esac
  command -v "${CMD[0]}" >/dev/null
}

# timed CFG TIMEOUT_S: run CMD through the timer; sets READY, STOP (ms) and
# RC, or READY=fail and WHY
timed() {
  local out
  out=$("$TMP/startlat" -k "$STOP_LIMIT" ${RX:+-r "$RX"} ${NRS:+-s "$(tr ' ' ',' <<<"$NRS")"} -t $(($2 * 1000)) \
    -w "$WAIT_MS" -o "$TMP/out.$1" -- "${CMD[@]}")
  read -r READY STOP _ <<<"$out"
  if [[ $STOP == '>'* ]]; then # still running STOP_LIMIT after SIGINT: killed
    STOP=$STOP_LIMIT STOP_NOTE+="$1 "
  elif [[ ! $READY =~ ^[0-9.]+$ || ! $STOP =~ ^[0-9.]+$ ]]; then
    WHY="$READY; $(grep -v -e RLIMIT_MEMLOCK -e '^$' "$TMP/out.$1" | head -n 1 | cut -c1-150)"
    READY=fail
  fi
}

# fmt_ms VALUES...: "median (min-max) ms"
fmt_ms() {
  local med mn mx n
  read -r med mn mx n <<<"$(stats 1 "$@")"
  ((n)) || { echo "-"; return; }
  ((n > 1)) && echo "$med ms ($mn-$mx)" || echo "$med ms"
}

TRACEFS_BEFORE=$(tracefs_state)
load_start
declare -A RD=() TD=() FAIL=()
read -r -a TRL <<<"$TRACERS"

# --- part tools ----------------------------------------------------------------
if [[ " $PARTS " == *" tools "* ]]; then
  CFGS=()
  for tool in $TOOLS; do
    for tr in "${TRL[@]}"; do
      tool_cmd "$tool" "$tr" || continue
      why=""; [[ $tr == tracekit ]] && why=$(unavailable "$tool")
      if [[ -n $why ]]; then # this kernel cannot run the tool
        FAIL[$tool:$tr]="unavailable: $why"
        continue
      fi
      CFGS+=("$tool:$tr")
    done
  done
  for ((r = 1; r <= RUNS; r++)); do
    round_order "$r" "${CFGS[@]}"
    log "round $r/$RUNS"
    for cfg in "${ORDER[@]}"; do
      [[ -n ${FAIL[$cfg]:-} ]] && continue
      tool_cmd "${cfg%%:*}" "${cfg#*:}"
      timed "$cfg" "$READY_TIMEOUT"
      if [[ $READY == fail ]]; then FAIL[$cfg]="failed: $WHY"; continue; fi
      RD[$cfg]+="$READY " TD[$cfg]+="$STOP "
    done
  done
fi

# --- part many -----------------------------------------------------------------
declare -A MRD=() MTD=()
KERNEL_ON="" KERNEL_OFF=""
if [[ " $PARTS " == *" many "* ]]; then
  nev=$(find "$TRACEFS"/events/syscalls -maxdepth 1 -name 'sys_enter_*' | wc -l)
  MANY=("stackcount -K:tracekit" "stackcount:tracekit" "funccount:tracekit" "bpftrace:bpftrace" "perf stat:perf")
  many_cmd() {
    RX="" NRS=""
    case $1 in
      "stackcount -K") ln -sf tracekit "$TMP/stackcount"; CMD=("$TMP/stackcount" -K "t:$MANY_GLOB"); RX='Hit Ctrl-C' ;;
      stackcount) ln -sf tracekit "$TMP/stackcount"; CMD=("$TMP/stackcount" "t:$MANY_GLOB"); RX='Hit Ctrl-C' ;;
      funccount) ln -sf tracekit "$TMP/funccount"; CMD=("$TMP/funccount" "t:$MANY_GLOB"); RX='Ctrl-C to end' ;;
      bpftrace) CMD=(bpftrace -e "tracepoint:$MANY_GLOB { @[kstack] = count(); }"); RX='^Attaching'
        NRS="$EPOLL_NRS $POLL_NRS" ;;
      "perf stat") CMD=(perf stat -a -o "$TMP/perf.stat" -e "$MANY_GLOB"); NRS=$POLL_NRS ;;
    esac
  }
  for ((r = 1; r <= MANY_RUNS; r++)); do
    round_order "$r" "${MANY[@]}"
    for cfg in "${ORDER[@]}"; do
      [[ " $TRACERS " == *" ${cfg#*:} "* && -z ${FAIL[many:$cfg]:-} ]] || continue
      command -v "${cfg%%[ :]*}" >/dev/null || [[ ${cfg#*:} == tracekit ]] || continue
      many_cmd "${cfg%%:*}"
      log "many: ${cfg%%:*} ($nev tracepoints)"
      STOP_LIMIT=300000 timed many "$((READY_TIMEOUT > 120 ? READY_TIMEOUT : 120))"
      if [[ $READY == fail ]]; then FAIL[many:$cfg]="failed: $WHY"; continue; fi
      MRD[$cfg]+="$READY " MTD[$cfg]+="$STOP "
    done
    # the kernel's own cost: the same events through tracefs by hand
    inst=$TRACEFS/instances/startup_bench_$$
    mkdir "$inst" || die "cannot create $inst"
    t0=$(date +%s%N)
    for f in "$inst"/events/syscalls/sys_enter_*/enable; do echo 1 >"$f"; done
    t1=$(date +%s%N)
    for f in "$inst"/events/syscalls/sys_enter_*/enable; do echo 0 >"$f"; done
    rmdir "$inst"
    t2=$(date +%s%N)
    KERNEL_ON+="$(((t1 - t0) / 100000))e-1 " KERNEL_OFF+="$(((t2 - t1) / 100000))e-1 "
  done
fi
load_end

# --- report --------------------------------------------------------------------
ms() { awk -v v="$1" 'BEGIN {printf "%.0f", v}'; }
declare -A WR=() WT=() # per tracer: "ms tool" of the worst median
if [[ " $PARTS " == *" tools "* ]]; then
  echo
  echo "Start-up (exec to ready line) and teardown (SIGINT to exit), median (min-max) of $RUNS, WAIT_MS=$WAIT_MS"
  printf '%-13s %-9s %-24s %-24s\n' tool tracer start-up teardown
  for tool in $TOOLS; do
    for tr in "${TRL[@]}"; do
      cfg=$tool:$tr
      if [[ -n ${FAIL[$cfg]:-} ]]; then printf '%-13s %-9s %s\n' "$tool" "$tr" "${FAIL[$cfg]}"; continue; fi
      [[ -n ${RD[$cfg]:-} ]] || continue
      # shellcheck disable=SC2086
      printf '%-13s %-9s %-24s %-24s\n' "$tool" "$tr" "$(fmt_ms ${RD[$cfg]})" "$(fmt_ms ${TD[$cfg]})"
      # shellcheck disable=SC2086
      r=$(median 1 ${RD[$cfg]}) t=$(median 1 ${TD[$cfg]})
      awk -v a="$r" -v b="${WR[$tr]:-0}" 'BEGIN {exit !(a > b + 0)}' && WR[$tr]="$r $tool"
      awk -v a="$t" -v b="${WT[$tr]:-0}" 'BEGIN {exit !(a > b + 0)}' && WT[$tr]="$t $tool"
    done
  done
  cell() { [[ -n ${1:-} ]] && echo "$(ms "${1%% *}") ms (${1#* })" || echo "-"; }
  read -r wr wrt <<<"${WR[tracekit]:-}"
  read -r wt wtt <<<"${WT[tracekit]:-}"
  echo "worst start-up: tracekit $(cell "${WR[tracekit]:-}"), bpftrace $(cell "${WR[bpftrace]:-}"), perf $(cell "${WR[perf]:-}")"
  echo "worst teardown: tracekit $(cell "${WT[tracekit]:-}"), bpftrace $(cell "${WT[bpftrace]:-}"), perf $(cell "${WT[perf]:-}")"
  # a tracekit tool that failed (not one the kernel cannot run) misses both
  failed=""
  for k in "${!FAIL[@]}"; do [[ $k == *:tracekit && ${FAIL[$k]} == failed:* ]] && failed+="${k%%:*} "; done
  if [[ -n ${wr:-} ]]; then
    v=missed; awk -v a="$wr" 'BEGIN {exit !(a < 100)}' && v=met
    [[ -n $failed ]] && v="missed failed: ${failed% }"
    summary_row "start-up, worst tool ($wrt)" "$(cell "${WR[tracekit]}")" "$(cell "${WR[bpftrace]:-}")" \
      "$(cell "${WR[perf]:-}")" - "< 100 ms" "$v"
  fi
  if [[ -n ${wt:-} ]]; then
    v=missed; awk -v a="$wt" 'BEGIN {exit !(a < 200)}' && v=met
    [[ -n $failed ]] && v="missed failed: ${failed% }"
    summary_row "teardown, worst tool ($wtt)" "$(cell "${WT[tracekit]}")" "$(cell "${WT[bpftrace]:-}")" \
      "$(cell "${WT[perf]:-}")" - "< 200 ms" "$v"
  fi
  if [[ -n ${RD[stackcount-K:tracekit]:-} ]]; then
    # shellcheck disable=SC2086
    summary_row "start-up, stackcount -K t:$EVENT (filed: 118 ms)" "$(ms "$(median 1 ${RD[stackcount-K:tracekit]})") ms" \
      "$([[ -n ${RD[stackcount-K:bpftrace]:-} ]] && echo "$(ms "$(median 1 ${RD[stackcount-K:bpftrace]})") ms" || echo -)" \
      "$([[ -n ${RD[stackcount-K:perf]:-} ]] && echo "$(ms "$(median 1 ${RD[stackcount-K:perf]})") ms" || echo -)" \
      - "< 100 ms" "$(awk -v a="$(median 1 ${RD[stackcount-K:tracekit]})" 'BEGIN {print (a < 100) ? "met" : "missed"}')"
  fi
fi

if [[ " $PARTS " == *" many "* ]]; then
  echo
  echo "$nev tracepoints ($MANY_GLOB): start-up and teardown, median (min-max) of $MANY_RUNS"
  printf '%-16s %-9s %-24s %-24s\n' tool tracer start-up teardown
  for cfg in "${MANY[@]}"; do
    if [[ -n ${FAIL[many:$cfg]:-} ]]; then printf '%-16s %-9s %s\n' "${cfg%%:*}" "${cfg#*:}" "${FAIL[many:$cfg]}"; continue; fi
    [[ -n ${MRD[$cfg]:-} ]] || continue
    # shellcheck disable=SC2086
    printf '%-16s %-9s %-24s %-24s\n' "${cfg%%:*}" "${cfg#*:}" "$(fmt_ms ${MRD[$cfg]})" "$(fmt_ms ${MTD[$cfg]})"
  done
  # shellcheck disable=SC2086
  kon=$(median 1 $KERNEL_ON) koff=$(median 1 $KERNEL_OFF)
  printf '%-16s %-9s %-24s %-24s\n' "by hand" tracefs "$kon ms (enable)" "$koff ms (disable, rmdir)"
  secs() { awk -v v="$1" 'BEGIN {printf (v < 10000) ? "%.2f s" : "%.1f s", v / 1000}'; }
  mcell() { # tracer phase(MRD|MTD) -> "X s (tool)" for the worst tool of that tracer
    local c w="" wt=""
    declare -n arr=$2
    for c in "${MANY[@]}"; do
      [[ ${c#*:} == "$1" && -n ${arr[$c]:-} ]] || continue
      # shellcheck disable=SC2086
      v=$(median 1 ${arr[$c]})
      awk -v a="$v" -v b="${w:-0}" 'BEGIN {exit !(a > b + 0)}' && { w=$v; wt=${c%%:*}; }
    done
    [[ -n $w ]] && echo "$(secs "$w") ($wt)" || echo -
  }
  # met: within the one-event budget (100 / 200 ms) of the kernel's cost
  for phase in start teardown; do
    arr=MRD floor=$kon budget=100
    [[ $phase == teardown ]] && arr=MTD floor=$koff budget=200
    declare -n A=$arr
    w=0
    for c in "stackcount -K:tracekit" "stackcount:tracekit" "funccount:tracekit"; do
      # shellcheck disable=SC2086
      [[ -n ${A[$c]:-} ]] && v=$(median 1 ${A[$c]}) && awk -v a="$v" -v b="$w" 'BEGIN {exit !(a > b)}' && w=$v
    done
    unset -n A
    v=missed; awk -v a="$w" -v f="$floor" -v b="$budget" 'BEGIN {exit !(a <= f + b)}' && v=met
    [[ $v == missed ]] && v="missed kernel $(secs "$floor")"
    summary_row "$nev tracepoints: $phase" "$(mcell tracekit "$arr")" "$(mcell bpftrace "$arr")" \
      "$(mcell perf "$arr")" - "<= kernel's cost ($(secs "$floor"))" "$v"
  done
fi

echo
[[ -n $STOP_NOTE ]] && echo "killed ${STOP_LIMIT} ms after SIGINT (counted as that): $STOP_NOTE"
load_summary
tracefs_report "$TRACEFS_BEFORE" "$(tracefs_state)"
