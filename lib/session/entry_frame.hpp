// Kernel stacks of kprobes at functions' entries, read from ftrace: the
// probed function as their first frame.
//
// The stacktrace option gives a kprobe event the stack unwound from the
// probe's registers. ORC unwinders (4.14+) start it at the probed function
// (its ip), then its caller; frame-pointer unwinders (3.10, 4.4: CONFIG_
// FRAME_POINTER without ORC) walk the saved frame pointers only, and at a
// function's first instruction the newest one is its caller's: the stack
// starts at the caller's caller (4.4, vfs_read from SyS_read: only
// entry_SYSCALL_64_fastpath). The probed function is put back from the
// record's probe address (__probe_ip, the first field after the common
// ones), as perf's callchain has it (its first frame is the sample's ip);
// the caller, whose return address is at the stack pointer and not in any
// frame, stays missing, as in perf's callchain and bcc's stacks there.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "session/probes.hpp"
#include "symbols/kallsyms.hpp"

namespace tracekit::stackcount {

// The ids of the events of targets that are kprobes at a function's first
// instruction (probe::Kind::kKernel without an offset).
std::unordered_set<int> entry_kprobe_ids(const session::Probes& probes,
                                         const std::vector<probe::Target>& targets);

// The probe address of a kprobe record (its __probe_ip: the 8 bytes after
// the 8 of the common fields), or 0 for a shorter record.
uint64_t kprobe_ip(std::span<const uint8_t> record);

// The function tracer's records (ftrace:function, struct ftrace_entry):
// the traced function's address and its caller's return address, the 8
// bytes each after the common fields; 0, 0 for a shorter record. Their
// stacks (func_stack_trace) lack the same frames on frame-pointer kernels
// (3.10: "system_call_fastpath" alone for vfs_read from SyS_read), and
// were empty on 4.14 (ORC, which does not unwind through ftrace's
// trampoline there): the function and its caller come from the record.
struct FunctionEntry {
  uint64_t ip = 0, parent_ip = 0;
};
FunctionEntry function_entry(std::span<const uint8_t> record);
// The id of ftrace:function in tracing_dir's events, -1 if none.
int function_event_id(const std::string& tracing_dir);

// stack without the ULONG_MAX that kernels before 4.15 or so end a kernel
// stack with (seen on 3.10, 4.4 and 4.14); then, when its first frame is
// not in the function containing ip (looked up in ksyms; also when stack
// is empty), ip first, and, given a caller's return address parent_ip
// whose function is not the next frame's, parent_ip after it: built in
// buf. ip 0 or not in a known symbol: only the end marker is dropped.
std::span<const uint64_t> with_probed_function(std::span<const uint64_t> stack, uint64_t ip,
                                               const symbols::KernelSymbols& ksyms,
                                               std::vector<uint64_t>& buf,
                                               uint64_t parent_ip = 0);

}  // namespace tracekit::stackcount
