# tests/vm/uprobe.sh: uprobe on the guest kernel (uprobe_events in a
# private instance). The truth: the calls workload calls work_unit(i, 3)
# 997 times, for i = 0 .. 996; it returns 3 * i + 1.

BIN=/tracekit/build/workloads/calls

# lines OUT: the workload's work_unit events.
uprobe_lines() { grep -E "^ *calls-$WL_PID +\[[0-9]+\].* work_unit: " "$1"; }

case_uprobe_entry_exact() {
  start_workload calls 997
  traced_run /tmp/up.out uprobe "p:$BIN:work_unit %di"
  local n
  n=$(uprobe_lines /tmp/up.out | wc -l)
  [ "$n" -eq 997 ] || { head -n 20 /tmp/up.out; fail "$n work_unit entries, expected 997"; }
  uprobe_lines /tmp/up.out | grep -Eq '=(0x)?3e4$' || fail "no entry with i = 996 (0x3e4): $(uprobe_lines /tmp/up.out | tail -n 2)"
}

# (3.10 prints the default u64 type as bare hex: arg1=3e4; later 0x3e4.)
# The return value from %ax: a register, which every kernel's uprobe_events
# takes ($retval only since 3.14: 3.10 refused it with EINVAL).
case_uretprobe_exact() {
  start_workload calls 997
  traced_run /tmp/up.out uprobe "r:$BIN:work_unit %ax"
  local n
  n=$(uprobe_lines /tmp/up.out | wc -l)
  [ "$n" -eq 997 ] || { head -n 20 /tmp/up.out; fail "$n work_unit returns, expected 997"; }
  uprobe_lines /tmp/up.out | grep -Eq '=(0x)?bad$' || fail "no return of 2989 (0xbad): $(uprobe_lines /tmp/up.out | tail -n 2)"
}
