# tests/vm/profile.sh: profile (perf cpu-clock sampling) on the guest kernel.
# The runtime tier checks profile's numbers on the build machines; here it
# must run and see kernel stacks on a stock distribution kernel under qemu.

# Whole-system kernel stacks, folded: the syscall workload's stacks go
# through the system call entry.
case_kernel_stacks() {
  start_workload syscalls 6
  profile -K -f 2 > /tmp/profile.out 2> /tmp/profile.err ||
    fail "profile exited with $?: $(tail -n 3 /tmp/profile.err)"
  has /tmp/profile.out '^syscalls;.*(entry_SYSCALL_64|do_syscall_64)' \
    "a folded kernel stack of syscalls through do_syscall_64"
}

# One process, user and kernel stacks in one line: the raw syscall in
# syscall_loop, then the kernel's side.
case_user_and_kernel_stacks() {
  start_workload syscalls 6
  profile -f -p "$WL_PID" 2 > /tmp/profile.out 2> /tmp/profile.err ||
    fail "profile exited with $?: $(tail -n 3 /tmp/profile.err)"
  has /tmp/profile.out '^syscalls;.*main;syscall_loop;.*do_syscall_64' \
    "main;syscall_loop then kernel frames in one folded stack"
  if grep -v '^syscalls[;-]' /tmp/profile.out | grep -q .; then
    fail "-p $WL_PID sampled other processes: $(grep -v '^syscalls' /tmp/profile.out | head -n 3)"
  fi
}

# The default (bcc multi-line) report, user stacks only: cpuratio burns
# three times more in func_b than in func_a; sampling under TCG keeps
# the order.
case_user_stacks_ratio() {
  start_workload cpuratio 6
  profile -U -p "$WL_PID" 2 > /tmp/profile.out 2> /tmp/profile.err ||
    fail "profile exited with $?: $(tail -n 3 /tmp/profile.err)"
  has /tmp/profile.out '^ +func_b$' "func_b in a stack"
  has /tmp/profile.out "^ +- +cpuratio \\($WL_PID\\)$" "the '-  cpuratio (PID)' line"
  profile -U -f -p "$WL_PID" 2 > /tmp/profile.folded ||
    fail "profile -f exited with $?"
  local a b
  # folded lines are "frame;frame;... COUNT"
  a=$(awk '$(NF-1) ~ /;func_a$/ { n += $NF } END { print n + 0 }' /tmp/profile.folded)
  b=$(awk '$(NF-1) ~ /;func_b$/ { n += $NF } END { print n + 0 }' /tmp/profile.folded)
  echo "func_a $a samples, func_b $b samples"
  [ "$b" -gt "$a" ] || fail "func_b ($b samples) not above func_a ($a)"
}
