// A system call's user-string argument (the file name of openat, the path
// of execve), read by the best path this kernel has, and paired per thread
// with the call's return value from its syscalls:sys_exit_<name> tracepoint.
//
// Syscall tracepoints carry only the pointer, so the string comes from a
// probe of our own, created in this order:
//   1. kprobes on the syscall's entry function: __x64_sys_<name> (4.17+,
//      the arguments behind a struct pt_regs * in %di), else SyS_<name>
//      (before 4.17: sys_<name>'s alias, the name available_filter_functions
//      lists) or sys_<name> (the arguments in registers); ustring where the
//      kernel has it (5.3), else string (which reads user memory there);
//   2. eprobes on syscalls:sys_enter_<name> (5.15, CONFIG_EPROBE_EVENTS),
//      reading the string behind the tracepoint's own pointer field;
//   3. uprobes on the C library's wrappers (open, openat, __open_2, ...)
//      with the argument's register of the calling convention: programs
//      that make the system call without the C library (static or Go
//      binaries, the dynamic loader's own opens) are missed.
// Calls with an argument vector (execve) also get the uprobes of 3 with 1
// or 2: those can read pages the kernel-side probes cannot.
// A way whose features are missing (kernel::Features, with
// TRACEKIT_KERNEL_FEATURES applied) is skipped; a way the kernel refuses is
// said on warn and the next one tried. x86_64 only: registers by name.
//
// The entry probes and the exit tracepoints are made into one TraceSession
// (lib/session/trace_session.hpp); once its ftrace reader is started, push()
// decodes its events and hands out each completed call.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ftrace/reader.hpp"
#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "session/thread_pairing.hpp"
#include "session/trace_session.hpp"
#include "util/result.hpp"

struct tep_handle;
struct tep_format_field;

namespace tracekit::session {

// A system call with a user string argument, or an argument vector.
struct SyscallString {
  std::string name;   // "openat": syscalls:sys_enter_openat, sys_exit_openat
  int arg = 0;        // the string's argument, from 0 (with argv: the vector's)
  std::string field;  // its name in sys_enter_<name>'s format ("filename", "argv")
  // Above 0: the argument is a NULL-ended array of strings (execve's argv)
  // and its first `argv` elements are fetched, as fields <field>0,
  // <field>1, ...; an element past the end reads as a fault.
  int argv = 0;
};

enum class StringPath { kKprobe, kEprobe, kUprobe };
// "kprobes", "eprobes", "uprobes".
std::string_view path_name(StringPath p);

// A char[] or __data_loc string field of a raw record (an event of
// reader's formats), up to its first NUL; nullopt for a missing field, and
// for a __data_loc string of length 0 (a probe's fetch that faulted).
std::optional<std::string> read_string(const tep_format_field* f, std::span<const uint8_t> record);

// A C library function that makes one of the calls, and its argument that
// is the string (open(path, ...) makes openat with the path as argument 0),
// and the one that is the argument vector (execve's argv), -1 if none.
struct LibcWrapper {
  std::string_view symbol;
  int arg = 0;
  int argv = -1;
};
// The wrappers of glibc (and musl) that make system call `syscall`, with
// the string's argument; empty for a call this table does not know. Pure.
std::vector<LibcWrapper> libc_wrappers(std::string_view syscall);

// Fetch arguments (x86_64), pure. With element >= 0 the argument is an
// array of string pointers, and its element's string is fetched (a user
// memory read "+u" for the pointer where the kernel has ustring):
//  - of a kprobe on a syscall's entry function: argument arg behind the
//    pt_regs pointer in %di (pt_regs: true) or in its register of the C
//    calling convention; "+0(+104(%di)):ustring" for argument 1,
//    "+0(+u16(+104(%di))):ustring" for its element 2.
std::string kprobe_string_fetch(int arg, bool pt_regs, bool ustring, int element = -1);
//  - of a uprobe on a C function's entry: "+0(%si):string" for argument 1,
//    "+0(+16(%si)):string" for its element 2.
std::string uprobe_string_fetch(int arg, int element = -1);
//  - of an eprobe on a syscall tracepoint: "+0($filename):ustring" for the
//    field filename, "+0(+u8($argv)):ustring" for element 1 of argv.
std::string eprobe_string_fetch(const std::string& field, bool ustring, int element = -1);

// The probes of one way: the entry probes to create, and what to say.
struct StringPlan {
  StringPath path = StringPath::kUprobe;
  std::vector<probe::Target> entries;  // their event_name: the call's index, "s0", "s1", ...
  std::string how;                     // "kprobes on __x64_sys_openat, __x64_sys_open"
};
// The kprobes for calls, given the kernel functions kprobes can attach to
// (sorted). Error: a call has no entry function. Pure.
Result<StringPlan> plan_kprobes(const std::vector<SyscallString>& calls,
                                const std::vector<std::string>& kernel_functions, bool ustring,
                                bool comm);
// The eprobes on the calls' sys_enter tracepoints. Pure.
StringPlan plan_eprobes(const std::vector<SyscallString>& calls, bool ustring, bool comm);
// How the uprobes of plan_uprobes share events: each its own, one per
// call (the kernel has kernel::Feature::kProbeAppend: disabling an event
// waits for one kernel synchronisation however many probes it has), or one
// for all the calls, each probe's call given by an immediate fetch argument
// (kProbeImmediate too, and the calls' fields alike).
enum class UprobeEvents { kEach, kPerCall, kOne };
// The uprobes on the wrappers found in functions (the symbols of the C
// library at libc), one per address (aliases share one). Events are named
// "c<N>_<wrapper>" (kEach), "c<N>_<call>" (kPerCall, the probes'
// probe::Target::shared_event set), or, for probes of several calls whose
// fields are named alike, "c0_calls" with a field tk_call, the call's
// index (kOne; else as kPerCall). Error: none of the wrappers is there.
// Pure.
Result<StringPlan> plan_uprobes(const std::vector<SyscallString>& calls, const std::string& libc,
                                const std::vector<probe::ElfFunction>& functions, bool comm,
                                UprobeEvents events);

// One completed call: the entry's string, the exit's return value.
struct SyscallCall {
  uint64_t ts = 0;   // the exit's time, ns (taken before the exit: the entry's)
  int tid = 0;       // the thread (common_pid)
  size_t call = 0;   // index into the calls
  std::string str;   // the string argument
  std::string comm;  // the task's name at entry, "" when the probe could not say
  int64_t ret = 0;
  // An argument vector's elements, up to the first that could not be read
  // (the end of the array, or a fault): at most SyscallString::argv.
  std::vector<std::string> argv;
};

// Per-thread pairing of entries with exits, pure. An entry is kept until
// its thread's next exit of one of the calls (a second entry first
// replaces it: __open_2 jumps into open, and both are probed).
class CallPairing {
 public:
  void entry(int tid, size_t call, std::string str, std::string comm);
  // An entry whose call is read whole already (its ts the entry's). A
  // second entry of the same call keeps the first one's argument vector
  // when that is longer (a uprobe on the wrapper read it, and the kprobe
  // at the system call's entry could not read a page that is not mapped).
  void entry(SyscallCall c);
  // The completed call, or nullopt when the thread had no entry (a call
  // made without a probed wrapper, or begun before tracing).
  std::optional<SyscallCall> exit(int tid, uint64_t ts, int64_t ret);
  // The thread's pending entry, removed (for calls that are known to have
  // succeeded before their exit, like an exec at sched_process_exec), or
  // nullopt.
  std::optional<SyscallCall> take(int tid);
  size_t pending() const { return pending_.pending(); }

 private:
  ThreadPairing<SyscallCall> pending_;
};

class SyscallStrings {
 public:
  // Creates the entry probes by the first way this kernel has and takes
  // (said on warn when a way was refused), with the calls' exit
  // tracepoints, and the tool's other targets (also), in a TraceSession
  // of tool. Error: no way works (the features missing from each:
  // kernel::Features::missing, never an errno), or no call has an exit
  // tracepoint.
  static Result<SyscallStrings> create(const std::string& tracing_dir, const std::string& tool,
                                       std::vector<SyscallString> calls, kernel::Features& features,
                                       std::ostream& warn,
                                       const std::vector<probe::Target>& also = {});
  SyscallStrings(SyscallStrings&&) noexcept = default;
  SyscallStrings& operator=(SyscallStrings&&) = delete;

  StringPath path() const { return plan_.path; }
  const std::string& how() const { return plan_.how; }
  const std::vector<SyscallString>& calls() const { return calls_; }
  TraceSession& trace() { return *trace_; }

  // Finds the events' fields in the reader's formats; call once the
  // session's ftrace reader is started. Error: an event or field missing.
  Status attach(tep_handle* tep);
  // Decodes an event of the session: an entry is kept, an exit hands out
  // the call it completes. Other events (the tool's own) are ignored.
  std::optional<SyscallCall> push(const ftrace::Event& e);
  // Whether e is one of the entry or exit events.
  bool owns(const ftrace::Event& e) const { return by_id_.contains(e.type); }
  // The entry pending for thread tid, removed: see CallPairing::take.
  std::optional<SyscallCall> take(int tid) { return pairing_.take(tid); }
  // Exits that found no entry of their thread.
  uint64_t unpaired() const { return unpaired_; }

 private:
  SyscallStrings() = default;
  struct Decoded {
    bool entry = false;
    size_t call = 0;
    const tep_format_field* value = nullptr;  // the string, or ret
    const tep_format_field* comm = nullptr;
    std::vector<const tep_format_field*> argv;  // the vector's elements
    const tep_format_field* call_field = nullptr;  // UprobeEvents::kOne's tk_call
  };
  std::vector<SyscallString> calls_;
  StringPlan plan_;
  std::vector<std::pair<std::string, size_t>> exits_;  // sys_exit_<name>, call
  std::optional<TraceSession> trace_;
  std::unordered_map<int, Decoded> by_id_;
  CallPairing pairing_;
  uint64_t unpaired_ = 0;
};

}  // namespace tracekit::session
