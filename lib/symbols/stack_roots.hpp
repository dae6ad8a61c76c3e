// Where a user stack really ends: the frame-pointer walk (the kernel's
// perf_callchain_user, ftrace's userstacktrace) follows saved frame pointers
// until one is not a readable user address, but the functions that start a
// program or a thread are built without frame pointers in glibc and use
// %rbp for their own data. Their callee (main, a thread's function) saves
// that %rbp, and the walk then reads a "frame" out of their locals: one or
// two made-up frames past them. Measured in the static workloads (glibc
// 2.36): __libc_start_main does `lea 0xb8(%rsp),%rbp` before it calls
// __libc_start_call_main (which leaves %rbp alone), and every user stack of
// build/workloads-static/syscalls ended
// "[unknown];register_tm_clones;__libc_start_call_main;main" on 3.10 and
// 4.4 (and, by the lead's first contact, 4.14 and 4.19). Any kernel's walk
// reads the same words there: each stops only at an unreadable frame (the
// old ones also at one below the stack pointer).
// (report::trim_past_stack_roots cuts the report's records there.)
#pragma once

#include <string_view>

namespace tracekit::symbols {

// Whether a user function is where a program's or thread's stack starts:
// nothing a frame-pointer walk finds past it (its callers) is real. glibc's
// _start, __libc_start_main and __libc_start_call_main (2.34+), start_thread
// and clone/clone3; musl's __libc_start_main and libc_start_main_stage2.
bool is_stack_root(std::string_view name);

}  // namespace tracekit::symbols
