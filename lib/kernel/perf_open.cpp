#include "kernel/perf_open.hpp"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

namespace tracekit::kernel {

namespace {

long raw_open(perf_event_attr* attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return ::syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

// 1: the kernel takes PERF_FLAG_FD_CLOEXEC; -1: it refuses it; 0: not known yet.
std::atomic<int> cloexec_flag{0};

}  // namespace

int perf_event_open_cloexec(perf_event_attr* attr, pid_t pid, int cpu, int group_fd) {
  if (cloexec_flag.load(std::memory_order_relaxed) >= 0) {
    long fd = raw_open(attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);
    if (fd >= 0) {
      cloexec_flag.store(1, std::memory_order_relaxed);
      return static_cast<int>(fd);
    }
    // EINVAL may also be the attr's fault: only an open that succeeds
    // without the flag shows that the flag was the problem.
    if (errno != EINVAL || cloexec_flag.load(std::memory_order_relaxed) == 1) return -1;
  }
  long fd = raw_open(attr, pid, cpu, group_fd, 0);
  if (fd < 0) return -1;
  cloexec_flag.store(-1, std::memory_order_relaxed);
  if (::fcntl(static_cast<int>(fd), F_SETFD, FD_CLOEXEC) != 0) {
    int err = errno;
    ::close(static_cast<int>(fd));
    errno = err;
    return -1;
  }
  return static_cast<int>(fd);
}

}  // namespace tracekit::kernel
