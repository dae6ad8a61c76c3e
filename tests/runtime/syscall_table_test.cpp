// The system call numbers tracekit knows beyond libseccomp's tables
// (syscalls::newer_than_libseccomp), checked against the running kernel:
// each call, made with arguments it refuses (a bad fd, null pointers), fires
// its own syscalls:sys_enter_NAME tracepoint once, counted by a perf counter
// on this thread (uretprobe and uprobe, which kill their caller, in a child).
// Calls this kernel does not have are skipped one by one.
#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "harness.hpp"
#include "syscalls/table.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace tracekit {
namespace {

using testing::slurp;

TEST(SyscallTableRuntime, NewerCallsFireTheirOwnTracepoints) {
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  size_t checked = 0;
  for (const auto& [name, nr] : syscalls::newer_than_libseccomp()) {
    const std::string id_path = *dir + "/events/syscalls/sys_enter_" + std::string(name) + "/id";
    std::string id_text = slurp(id_path);
    if (id_text.empty()) continue;  // not in this kernel
    perf_event_attr a{};
    a.size = sizeof a;
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = std::stoull(std::string(trim(id_text)));
    a.disabled = 1;
    long rc = 0;
    uint64_t count = 0;
    if (name == "uretprobe" || name == "uprobe") {
      // Outside the kernel's trampolines these send the caller SIGILL: make
      // the call in a child, counted from when it is told to go.
      int go[2];
      ASSERT_EQ(pipe(go), 0);
      const pid_t child = fork();
      ASSERT_GE(child, 0);
      if (child == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) == 1) ::syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L);
        _exit(0);
      }
      close(go[0]);
      a.disabled = 0;
      int fd = static_cast<int>(::syscall(SYS_perf_event_open, &a, child, -1, -1, PERF_FLAG_FD_CLOEXEC));
      const bool opened = fd >= 0;
      Fd owner(fd);
      ASSERT_EQ(write(go[1], "g", 1), 1);
      close(go[1]);
      int status = 0;
      ASSERT_EQ(waitpid(child, &status, 0), child);
      ASSERT_TRUE(opened) << name;
      ASSERT_EQ(read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
      rc = WIFSIGNALED(status) ? -WTERMSIG(status) : WEXITSTATUS(status);
    } else {
      int fd = static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
      ASSERT_GE(fd, 0) << name;
      Fd owner(fd);
      ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_ENABLE, 0), 0);
      rc = ::syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L);
      ASSERT_EQ(ioctl(fd, PERF_EVENT_IOC_DISABLE, 0), 0);
      ASSERT_EQ(read(fd, &count, sizeof count), static_cast<ssize_t>(sizeof count));
    }
    EXPECT_EQ(count, 1u) << name << " is not " << nr << " here (the call returned " << rc << ")";
    EXPECT_EQ(syscalls::number(name), nr);
    EXPECT_EQ(syscalls::name(nr), name);
    ++checked;
  }
  if (syscalls::newer_than_libseccomp().empty()) GTEST_SKIP() << "no table beyond libseccomp's on this architecture";
  EXPECT_GT(checked, 0u) << "none of the newer calls has a tracepoint in this kernel";
}

}  // namespace
}  // namespace tracekit
