// User stacks of tasks in a system call, on kernels with the x86-64 syscall
// fast path (system_call_fastpath before 4.1, entry_SYSCALL_64_fastpath
// 4.1-4.15; 4.16 saves every register on every entry).
//
// The fast path saves a partial pt_regs: %rbp, %rbx and %r12-%r15 are not
// written ("sub $(6*8), %rsp" in 4.4's entry_SYSCALL_64). The kernel's
// perf_callchain_user walks the user frame pointers from
// task_pt_regs(current)->bp, so for a sample taken while the task is in a
// fast-path system call (every sched:sched_switch of a sleeping task, a
// cpu-clock tick in a system call) it starts from whatever stale value that
// slot holds: measured on 4.4, offcputime's stacks of the sleeps workload
// were "[unknown];main" and profile's "syscall_loop" alone, where 6.1 gives
// "__libc_start_call_main;main" and "__libc_start_call_main;main;
// syscall_loop". The slow path (taken when a thread has
// _TIF_WORK_SYSCALL_ENTRY set) saves the whole pt_regs. A syscall
// tracepoint in use sets TIF_SYSCALL_TRACEPOINT on every thread
// (syscall_regfunc, when its first probe registers; new threads inherit it
// at fork), and a perf event on a syscall tracepoint registers its probe
// when it is opened, disabled or not. Holding one such event
// (syscalls:sys_enter_vhangup, on the tool itself, never enabled: it
// records nothing) puts every system call of the machine on the slow path
// while the tool runs: measured, the user stacks of 4.4 and 3.10 are then
// those of 6.1; the kernel stacks of system calls go through the slow path
// (tracesys, syscall_trace_enter) instead of the fast path.
#pragma once

#include <string>

#include "util/fd.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// Whether this kernel has a syscall fast path: /proc/kallsyms names
// system_call_fastpath or entry_SYSCALL_64_fastpath.
bool has_syscall_fast_path();

// Where has_syscall_fast_path(): the event above (hold it for the run), or
// an error (no syscall tracepoint, or the kernel refused the event).
// Elsewhere an empty Fd.
Result<Fd> full_syscall_regs(const std::string& tracing_dir);

// The warning for full_syscall_regs()'s error: user stacks in system calls
// may then be cut or wrong past their first frame.
std::string syscall_regs_warning(const Error& e);

}  // namespace tracekit::perf
