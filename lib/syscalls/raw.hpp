// The stand-in for syscall tracepoints on kernels without them
// (CONFIG_FTRACE_SYSCALLS off, or TRACEKIT_KERNEL_FEATURES=
// -syscall_tracepoints): syscalls:sys_enter_NAME becomes
// raw_syscalls:sys_enter with the kernel filter "id == NR" (sys_exit_NAME:
// raw_syscalls:sys_exit), several syscalls one event with
// "id == A || id == B", and each record is named back by its id field.
// This is the one place that maps syscall events to raw_syscalls and ids;
// the numbers come from syscalls/table.hpp (libseccomp). Pure but for that
// table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::syscalls {

inline constexpr std::string_view kSystem = "syscalls";         // the tracepoints' system
inline constexpr std::string_view kRawSystem = "raw_syscalls";  // the stand-in's

// One syscall event as raw_syscalls traces it.
struct RawEvent {
  bool exit = false;  // sys_exit_NAME (raw_syscalls:sys_exit), else sys_enter_NAME
  int nr = -1;        // the syscall number: the raw record's id
};

// "sys_enter" or "sys_exit": the raw_syscalls event of that side.
std::string_view raw_event(bool exit);

// The raw event and number of syscalls:event ("sys_enter_getppid" ->
// {enter, 110} on x86-64). NAME is the kernel's (newstat, newuname,
// sendfile64, umount) or syscall(2)'s (stat, uname, sendfile, umount2).
// Error (no errno): event is not sys_enter_NAME or
// sys_exit_NAME, or libseccomp knows no syscall NAME on this architecture
// (the message names it and says why its number is needed).
Result<RawEvent> to_raw(std::string_view event);

// The syscalls:* event names of every syscall libseccomp knows here:
// "sys_enter_NAME" and "sys_exit_NAME", sorted, for matching specs against.
std::vector<std::string> event_names();

// The syscalls:* event name a raw record stands for: "sys_enter_getppid";
// "sys_enter_#NR" when libseccomp knows no name for nr.
std::string event_name(bool exit, long nr);

// The kernel filter of a raw event standing for these syscall numbers:
// "id == 110", "id == 39 || id == 110" (sorted, without duplicates), three
// or more in a row as a range ("(id >= 0 && id <= 9) || id == 12"); "" for
// none.
std::string id_filter(std::vector<int> nrs);

// The hint for a user filter the kernel refused on a raw event (raw_event:
// "sys_enter" or "sys_exit"): the filter applies to raw_syscalls, whose
// fields are not the syscall's.
std::string filter_hint(std::string_view raw_event);

// What the tools say once when they trace through raw_syscalls:
// "this kernel has no syscalls:* tracepoints: tracing raw_syscalls with an id
// filter" (forced: "... turned off by TRACEKIT_KERNEL_FEATURES: ...").
std::string fallback_note(bool forced);

}  // namespace tracekit::syscalls
