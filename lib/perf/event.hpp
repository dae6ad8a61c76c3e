// perf_event_open and the file descriptors it returns.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "util/fd.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// perf event file descriptors are owned by tracekit::Fd (util/fd.hpp).
using tracekit::Fd;

// perf_event_open(2), close-on-exec (kernel::perf_event_open_cloexec: the
// flag, or fcntl before Linux 3.14). attr.size is filled in.
// On failure the Error carries errno and a hint for the common causes:
// EACCES/EPERM (not root / perf_event_paranoid), ENOENT/EOPNOTSUPP/ENODEV
// (event not supported by this kernel), EOVERFLOW (sample_max_stack above
// /proc/sys/kernel/perf_event_max_stack), ESRCH (no such process).
Result<Fd> open_event(perf_event_attr attr, pid_t pid, int cpu, int group_fd = -1);

// What a filter the kernel refused (EINVAL) may have got wrong.
inline constexpr const char* kFilterHint =
    "not a tracepoint event, or the filter names a field the event lacks or does not parse";

// PERF_EVENT_IOC_SET_FILTER (a tracepoint filter, the kernel's syntax) on
// fd; nothing for "". Error: errno, where (for the message), a hint on EINVAL.
Status set_filter(const Fd& fd, const std::string& filter, const std::string& where);

// CPUs that are online now (/sys/devices/system/cpu/online).
Result<std::vector<int>> online_cpus();

// Checks a CPU the user asked for (-c, -C) against online, the text of
// /sys/devices/system/cpu/online ("0-3,5\n"). Pure, for tests. Error:
// "CPU 5 is not online" with the online CPUs in the hint, as the kernel
// lists them ("online CPUs: 0-1"); a malformed list.
Result<void> check_cpu_online(int cpu, std::string_view online);
// The same against this machine's /sys/devices/system/cpu/online. Error:
// also the file cannot be read.
Result<void> check_cpu_online(int cpu);

// /proc/sys/kernel/perf_event_max_stack (127 when the file is missing).
int max_stack();

namespace detail {
// The hint open_event() attaches for perf_event_open's errno err; empty when
// there is nothing useful to say. Separate so tests can check every case.
std::string open_error_hint(int err);
}  // namespace detail

}  // namespace tracekit::perf
