# tests/vm/profile.sh: profile (perf cpu-clock sampling) on the guest kernel.
# The runtime tier checks profile's numbers on the build machines; here it
# must run and see kernel stacks on a stock distribution kernel under qemu.

# The 64-bit system call entry's functions, as this kernel names them
# (/proc/kallsyms), joined by '|': do_syscall_64 and entry_SYSCALL_64*
# since 4.6 (entry_SYSCALL_64_fastpath in 4.1-4.15), system_call,
# system_call_fastpath and system_call_after_swapgs before 4.1; the slow
# path's tracesys* (up to 4.15), which profile puts every system call on
# while it takes user stacks where there is a fast path
# (perf/syscall_regs.hpp).
syscall_entries() {
  awk '$2 ~ /^[tT]$/ && $3 ~ /^(do_syscall_64|entry_SYSCALL_64.*|system_call|system_call_fastpath|system_call_after_swapgs|tracesys.*)$/ { n[$3] = 1 }
    END { s = ""; for (k in n) s = s (s == "" ? "" : "|") k; print s }' /proc/kallsyms
}

# Whole-system kernel stacks, folded: the syscall workload's stacks go
# through the system call entry.
case_kernel_stacks() {
  local entry
  entry=$(syscall_entries)
  [ -n "$entry" ] || fail "no system call entry function in /proc/kallsyms"
  start_workload syscalls 6
  profile -K -f 2 > /tmp/profile.out 2> /tmp/profile.err ||
    fail "profile exited with $?: $(tail -n 3 /tmp/profile.err)"
  has /tmp/profile.out "^syscalls;.*($entry)" \
    "a folded kernel stack of syscalls through the system call entry ($entry)"
}

# One process, user and kernel stacks in one line: the raw syscall in
# syscall_loop, then the kernel's side.
# The user stack starts at glibc's __libc_start_call_main (2.34+) or
# __libc_start_main: nothing past it, where the frame-pointer walk reads
# made-up frames out of __libc_start_main's locals (symbols/stack_roots.hpp).
case_user_and_kernel_stacks() {
  local entry
  entry=$(syscall_entries)
  [ -n "$entry" ] || fail "no system call entry function in /proc/kallsyms"
  start_workload syscalls 6
  profile -f -p "$WL_PID" 2 > /tmp/profile.out 2> /tmp/profile.err ||
    fail "profile exited with $?: $(tail -n 3 /tmp/profile.err)"
  has /tmp/profile.out "^syscalls;.*main;syscall_loop;.*($entry)" \
    "main;syscall_loop then kernel frames in one folded stack"
  if grep ';main;syscall_loop' /tmp/profile.out | grep -Ev '^syscalls;(__libc_start_call_main|__libc_start_main);main;' | grep -q .; then
    fail "a user stack with frames past glibc's start: $(grep ';main;syscall_loop' /tmp/profile.out | grep -Ev '^syscalls;(__libc_start_call_main|__libc_start_main);main;' | head -n 3)"
  fi
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
