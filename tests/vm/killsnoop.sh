# tests/vm/killsnoop.sh: killsnoop on the guest kernel (the syscall
# tracepoints of kill, tkill and tgkill, or the raw_syscalls fallback where
# the kernel has no syscall tracepoints). The truth: the kills workload
# sends its target 97 kill()s, 13 tgkill()s and one tkill() of SIGUSR2,
# then one tgkill() that fails with ESRCH (-3).

case_killsnoop_exact() {
  local out=/tmp/ks.out target tool sent failed
  rm -f /tmp/kgo "$out" "$out.err"
  mkfifo /tmp/kgo
  defer "rm -f /tmp/kgo"
  # Its go is a byte on stdin: a fifo, which its open waits on until the
  # case opens the writing end.
  rm -f /tmp/kills.out
  kills 97 13 1 < /tmp/kgo > /tmp/kills.out 2>&1 &
  WL_PID=$!
  defer "kill $WL_PID 2>/dev/null; wait $WL_PID 2>/dev/null"
  exec 3> /tmp/kgo
  defer "exec 3>&-"
  wait_for /tmp/kills.out '^waiting$'
  target=$(awk '$1 == "target" { print $2 }' /tmp/kills.out)
  killsnoop > "$out" 2> "$out.err" &
  tool=$!
  defer "kill $tool 2>/dev/null"
  wait_for "$out" 'Ctrl-C to end'
  echo go >&3
  wait_for /tmp/kills.out '^done$'
  sleep 1
  kill -INT "$tool"
  wait "$tool" || fail "killsnoop exited with $?: $(tail -n 3 "$out.err")"
  sent=$(awk -v p="$WL_PID" -v t="$target" '$2 == p && $3 == t && $4 == 12 && $5 == 0' "$out" | wc -l)
  failed=$(awk -v p="$WL_PID" '$2 == p && $3 == p && $4 == 12 && $5 == -3' "$out" | wc -l)
  [ "$sent" -eq 111 ] && [ "$failed" -eq 1 ] ||
    { head -n 20 "$out"; fail "$sent signals sent and $failed failed, expected 111 and 1"; }
}
