# tests/vm/tcpretrans.sh: tcpretrans on kernels with kprobes: the kprobe on
# tcp_retransmit_skb reading the struct sock (the way for kernels before
# the tcp:tcp_retransmit_skb tracepoint, forced here with
# TRACEKIT_KERNEL_FEATURES=-tcp_retransmit_tp), -l's kprobe on
# tcp_send_loss_probe, and the tracepoint path of these kernels (5.10,
# 6.1) too. The guest has no network but loopback, which is all the
# tcpretrans workload uses: in a network namespace of its own, a loopback
# connection whose packets to the server a socket filter drops for a
# while, once ESTABLISHED and once in FIN_WAIT1; it prints per phase the
# namespace's TcpRetransSegs and TCPLossProbes deltas. The truths:
#  - tracepoint: the connection's lines in a state = RetransSegs (the
#    tracepoint is in __tcp_retransmit_skb, which loss probes call too);
#  - kprobe on tcp_retransmit_skb: RetransSegs - TCPLossProbes (a loss
#    probe that retransmits calls __tcp_retransmit_skb directly; with
#    nothing new to send, every probe here is such a retransmit);
#  - -l: at least TCPLossProbes "L>" lines (the kprobe fires on every call,
#    also those that only rearm the timer), and at least one.
# perf-tools' tcpretrans is a Perl script: the guest has no Perl, so it is
# not compared here.
# On a kernel without TCP (no tcp_retransmit_skb in /proc/kallsyms: built
# without CONFIG_INET, as the upstream 3.10-4.19 images are) each case
# checks instead that tcpretrans refuses: exit 1, naming the function and
# CONFIG_INET, nothing left in tracefs (without_tcp).
# vm-static: only: kprobe_ipv4 tracepoint_ipv4 kprobe_stacks loss_probes

# without_tcp CMD...: 1 where the kernel has TCP; else checks that CMD
# (tcpretrans) refuses clearly and leaves nothing, and returns 0.
without_tcp() {
  local rc=0
  grep -q ' [tT] tcp_retransmit_skb$' /proc/kallsyms && return 1
  step "no tcp_retransmit_skb in /proc/kallsyms: $* must refuse"
  rm -f /tmp/tr.out /tmp/tr.out.err
  "$@" > /tmp/tr.out 2> /tmp/tr.out.err || rc=$?
  [ "$rc" -eq 1 ] || fail "tcpretrans exited with $rc on a kernel without TCP: $(tail -n 3 /tmp/tr.out.err)"
  has /tmp/tr.out.err '^tcpretrans: this kernel has no tcp_retransmit_skb .*CONFIG_INET' \
    "the refusal naming tcp_retransmit_skb and CONFIG_INET"
  [ ! -s /tmp/tr.out ] || fail "output before the refusal: $(head -n 3 /tmp/tr.out)"
  ! grep -q tracekit "$T/kprobe_events" || fail "a kprobe left: $(cat "$T/kprobe_events")"
  ! ls "$T/instances" | grep -q tracekit || fail "an instance left: $(ls "$T/instances")"
  return 0
}

# run_tcpretrans OUT FAMILY CMD...: CMD (tcpretrans) over a workload
# connection of FAMILY (4 or 6); sets CONN_L, CONN_R (client, server as
# "ADDR:PORT") and the phases' counts EST_R EST_P FIN_R FIN_P.
run_tcpretrans() {
  local out=$1 family=$2 tool
  shift 2
  start_workload retransmits "$family"
  CONN_L=$(awk '$1 == "conn" { print $2 ":" $3 }' "$WL_OUT")
  CONN_R=$(awk '$1 == "conn" { print $4 ":" $5 }' "$WL_OUT")
  rm -f "$out" "$out.err"
  "$@" > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for "$out" '^TIME +PID +LADDR:LPORT'
  kill -USR1 "$WL_PID"
  wait_for "$WL_OUT" '^done$'
  kill -INT "$tool"
  wait "$tool" || fail "tcpretrans exited with $?: $(tail -n 3 "$out.err")"
  EST_R=$(awk '$1 == "established" { print $2 }' "$WL_OUT")
  EST_P=$(awk '$1 == "established" { print $3 }' "$WL_OUT")
  FIN_R=$(awk '$1 == "fin_wait1" { print $2 }' "$WL_OUT")
  FIN_P=$(awk '$1 == "fin_wait1" { print $3 }' "$WL_OUT")
  [ -n "$CONN_L" ] && [ -n "$FIN_P" ] || fail "the workload said: $(cat "$WL_OUT")"
  [ "$EST_R" -gt 0 ] && [ "$FIN_R" -gt 0 ] || fail "no retransmits made: $(cat "$WL_OUT")"
}

# lines OUT ARROW STATE: the connection's lines with that arrow and state.
lines() {
  awk -v l="$CONN_L" -v r="$CONN_R" -v a="$2" -v s="$3" \
    '$3 == l && $4 == a ">" && $5 == r && $6 == s && NF == 6' "$1" | wc -l
}

# expect_count OUT ARROW STATE N
expect_count() {
  local got
  got=$(lines "$1" "$2" "$3")
  [ "$got" -eq "$4" ] || { head -n 30 "$1"; fail "$got '$2 $3' lines for $CONN_L, expected $4"; }
}

kprobe_path() {
  without_tcp env TRACEKIT_KERNEL_FEATURES=-tcp_retransmit_tp tcpretrans && return 0
  run_tcpretrans /tmp/tr.out "$1" env TRACEKIT_KERNEL_FEATURES=-tcp_retransmit_tp tcpretrans
  has /tmp/tr.out.err '^tcpretrans: retransmits from a kprobe on tcp_retransmit_skb$' \
    "the kprobe path"
  expect_count /tmp/tr.out R ESTABLISHED $((EST_R - EST_P))
  expect_count /tmp/tr.out R FIN_WAIT1 $((FIN_R - FIN_P))
}

# The struct sock read by offset: addresses, ports and state exact.
case_kprobe_ipv4() { kprobe_path 4; }
case_kprobe_ipv6() { kprobe_path 6; }

# -l: tail loss probes, "L>", from the kprobe on tcp_send_loss_probe.
case_loss_probes() {
  without_tcp tcpretrans -l && return 0
  run_tcpretrans /tmp/tr.out 4 tcpretrans -l
  has /tmp/tr.out.err 'tail loss probes from a kprobe on tcp_send_loss_probe' "-l's kprobe"
  expect_count /tmp/tr.out R ESTABLISHED "$EST_R"
  local l
  l=$(lines /tmp/tr.out L ESTABLISHED)
  [ "$l" -ge "$EST_P" ] && [ "$l" -ge 1 ] ||
    { head -n 30 /tmp/tr.out; fail "$l loss probe lines, expected at least $EST_P and 1"; }
}

# The tracepoint these kernels have: every retransmitted segment.
case_tracepoint_ipv4() {
  without_tcp tcpretrans && return 0
  run_tcpretrans /tmp/tr.out 4 tcpretrans
  has /tmp/tr.out.err '^tcpretrans: retransmits from the tcp:tcp_retransmit_skb tracepoint$' \
    "the tracepoint path"
  expect_count /tmp/tr.out R ESTABLISHED "$EST_R"
  expect_count /tmp/tr.out R FIN_WAIT1 "$FIN_R"
}

# -s on the kprobe path: each line's stack starts in tcp_retransmit_skb.
case_kprobe_stacks() {
  without_tcp env TRACEKIT_KERNEL_FEATURES=-tcp_retransmit_tp tcpretrans -s && return 0
  run_tcpretrans /tmp/tr.out 4 env TRACEKIT_KERNEL_FEATURES=-tcp_retransmit_tp tcpretrans -s
  local n
  n=$(awk -v l="$CONN_L" '$3 == l { getline; print }' /tmp/tr.out | grep -c '^ => tcp_retransmit_skb')
  [ "$n" -eq $((EST_R - EST_P + FIN_R - FIN_P)) ] ||
    { head -n 40 /tmp/tr.out; fail "$n lines followed by a stack from tcp_retransmit_skb"; }
}
