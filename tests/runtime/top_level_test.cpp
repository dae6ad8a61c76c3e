// The top-level guard against perf-tools on this kernel: its lock keeps
// perf-tools' scripts out while we hold it, theirs keeps us out while they
// run (naming the script's PID), and a top-level-only option the guard
// changed is restored when it is released.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "harness.hpp"
#include "tracefs/top_level.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::testing {
namespace {

class TopLevelRuntime : public TracingTest {};

TEST_F(TopLevelRuntime, LockKeepsPerfToolsOutAndTheirsKeepsUsOut) {
  PerfToolsPeer peer("tpoint");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  // printk-msg-only: top-level only, and it changes nothing a test reads.
  const std::string option = *dir + "/options/printk-msg-only";
  ASSERT_TRUE(std::filesystem::exists(option)) << option;
  const std::string before = slurp(option);
  {
    auto guard = tracefs::TopLevel::acquire(*dir);
    ASSERT_TRUE(guard) << guard.error().str();
    ASSERT_TRUE(guard->set_option("printk-msg-only", before != "1\n"));
    EXPECT_NE(slurp(option), before);
    auto theirs = run({"/usr/sbin/tpoint-perf", "syscalls:sys_enter_getppid"}, 60);
    EXPECT_NE(theirs.exit_code, 0);
    EXPECT_NE(theirs.err.find("ftrace may be in use by PID " + std::to_string(getpid())),
              std::string::npos)
        << theirs.err;
  }
  EXPECT_EQ(slurp(option), before);
  EXPECT_FALSE(std::filesystem::exists(tracefs::kFtraceLock));

  ASSERT_TRUE(peer.start({"syscalls:sys_enter_getppid"})) << peer.why_not();
  int holder = tracefs::lock_holder(slurp(tracefs::kFtraceLock));
  EXPECT_GT(holder, 0);
  EXPECT_NE(slurp("/proc/" + std::to_string(holder) + "/cmdline").find("tpoint-perf"),
            std::string::npos);
  auto ours = tracefs::TopLevel::acquire(*dir);
  ASSERT_FALSE(ours);
  EXPECT_EQ(ours.error().err, EBUSY);
  EXPECT_EQ(ours.error().message, "ftrace is in use by PID " + std::to_string(holder));
  auto r = peer.finish();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(tracefs::kFtraceLock));
}

}  // namespace
}  // namespace tracekit::testing
