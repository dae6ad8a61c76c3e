# tests/vm/syscount.sh: syscount on Debian's 6.1 and 5.10 kernels (older
# than the build machines' 6.18): raw_syscalls:sys_enter, set_event_pid and
# event-fork there too. The truth: syscount_n (tests/workloads/syscount_n.c)
# run as syscount's command makes 1009 getppid, one clone, one wait4, one
# write and one exit_group after the dynamic loader's calls; its child makes
# 401 getuid and one exit_group, every one a raw syscall.

G=1009
U=401

# Command mode, by process and syscall name: the markers and the child's
# whole count exactly, the execve that started the command not counted.
case_syscount_command_exact() {
  local out=/tmp/sc.out parent child
  rm -f "$out" "$out.err"
  syscount -cv syscount_n $G $U now > "$out" 2> "$out.err" ||
    fail "syscount failed: $(cat "$out.err")"
  has "$out" '^Tracing while running: "syscount_n 1009 401 now"\.\.\.$' "perf-tools' header"
  has "$out" '^PID +COMM +SYSCALL +COUNT$' "the column header"
  child=$(sed -n 's/^child //p' "$out")
  [ -n "$child" ] || fail "the workload printed no child PID: $(cat "$out")"
  parent=$(awk '$3 == "getppid" { print $1 }' "$out")
  [ -n "$parent" ] || { cat "$out"; fail "no getppid row"; }
  for want in "$parent getppid $G" "$parent clone 1" "$parent wait4 1" "$parent write 1" \
    "$parent exit_group 1" "$child getuid $U" "$child exit_group 1"; do
    set -- $want
    [ "$(awk -v p="$1" -v s="$2" '$1 == p && $3 == s { print $4 }' "$out")" = "$3" ] ||
      { cat "$out"; fail "expected $2 $3 times by $1"; }
  done
  [ "$(awk -v c="$child" '$1 == c' "$out" | wc -l)" -eq 2 ] ||
    { cat "$out"; fail "the child made other syscalls"; }
  [ "$(awk '$3 == "execve"' "$out" | wc -l)" -eq 0 ] || { cat "$out"; fail "execve counted"; }
}
