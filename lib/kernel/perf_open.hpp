// perf_event_open(2) with close-on-exec on every kernel.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

namespace tracekit::kernel {

// perf_event_open(attr, pid, cpu, group_fd) whose descriptor is
// close-on-exec: PERF_FLAG_FD_CLOEXEC where the kernel knows the flag
// (Linux 3.14); before it the kernel refuses every open that passes it
// (EINVAL), so the open is made without it and FD_CLOEXEC set at once
// (fcntl), and the kernel's answer is remembered for the next opens.
// Returns the descriptor, or -1 with errno.
int perf_event_open_cloexec(perf_event_attr* attr, pid_t pid, int cpu, int group_fd);

}  // namespace tracekit::kernel
