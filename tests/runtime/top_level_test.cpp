// The top-level guard against perf-tools on this kernel: its lock keeps
// perf-tools' scripts out while we hold it, theirs keeps us out while they
// run (naming the script's PID), and a top-level-only option the guard
// changed is restored when it is released.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <optional>

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

// A kernel without instances (forced): a tool traces at the top level,
// holding perf-tools' lock while it runs, and leaves the top level as it
// found it (TracingTest compares the enabled events and triggers; the
// buffer size and tracing_on are compared here) with the lock removed.
TEST_F(TopLevelRuntime, ToolWithoutInstancesTracesAtTheTopLevel) {
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  ASSERT_FALSE(std::filesystem::exists(tracefs::kFtraceLock)) << "a perf-tools run is going on";
  const std::string size_before = slurp(*dir + "/buffer_size_kb");
  const std::string on_before = slurp(*dir + "/tracing_on");
  const std::string enable = *dir + "/events/syscalls/sys_enter_getppid/enable";
  ASSERT_EQ(slurp(enable), "0\n") << "someone traces getppid at the top level";

  Workload w("stackwork");
  std::optional<ForcedFeatures> forced;
  forced.emplace("-instances");
  Running t({tool_path("stackcount"), "--backend", "ftrace", "-p", w.pid_str(),
             "t:syscalls:sys_enter_getppid"});
  forced.reset();
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20)) << "no header";
  EXPECT_EQ(tracefs::lock_holder(slurp(tracefs::kFtraceLock)), t.pid());
  EXPECT_EQ(slurp(enable).substr(0, 1), "1");  // "1*" with a trigger on it
  for (const auto& e : std::filesystem::directory_iterator(*dir + "/instances"))
    EXPECT_EQ(e.path().filename().string().rfind("tracekit_" + std::to_string(t.pid()), 0),
              std::string::npos)
        << e.path();
  w.go();
  EXPECT_TRUE(w.wait_line("done", 60));
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The exact count, as with an instance (stackwork's 997 getppid calls).
  unsigned long total = 0;
  for (const auto& l : lines_of(r.out)) {
    auto n = l.find_first_not_of(' ');
    if (n != std::string::npos && n > 0 && l.find_first_not_of("0123456789", n) == std::string::npos)
      total += std::stoul(l.substr(n));
  }
  EXPECT_EQ(total, 997u) << r.out;
  EXPECT_EQ(slurp(enable), "0\n");
  EXPECT_EQ(slurp(*dir + "/buffer_size_kb"), size_before);
  EXPECT_EQ(slurp(*dir + "/tracing_on"), on_before);
  EXPECT_FALSE(std::filesystem::exists(tracefs::kFtraceLock));
}

// A top-level run killed with SIGKILL cannot undo what it changed: its
// journal (root's, in /run/tracekit, never beside the lock in /var/tmp)
// lets reset-tracing do it, and then nothing of it is left.
TEST_F(TopLevelRuntime, AKilledTopLevelRunIsUndoneFromItsJournal) {
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  ASSERT_FALSE(std::filesystem::exists(tracefs::kFtraceLock)) << "a perf-tools run is going on";
  const std::string enable = *dir + "/events/syscalls/sys_enter_getppid/enable";
  ASSERT_EQ(slurp(enable), "0\n") << "someone traces getppid at the top level";
  const std::string on_before = slurp(*dir + "/tracing_on");

  std::optional<ForcedFeatures> forced;
  forced.emplace("-instances");
  Running t({tool_path("tpoint"), "syscalls:sys_enter_getppid"});
  forced.reset();
  ASSERT_TRUE(t.wait_for_stdout("Ctrl-C to end.\n", 20)) << "no header";
  const std::string journal = tracefs::top_level_journal(tracefs::kFtraceLock, t.pid());
  EXPECT_EQ(journal, "/run/tracekit/top-level." + std::to_string(t.pid()));
  struct stat st {};
  ASSERT_EQ(lstat(journal.c_str(), &st), 0) << journal;
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_uid, 0u);
  ASSERT_EQ(lstat(tracefs::kJournalDir, &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_EQ(slurp(enable), "1\n");
  t.signal(SIGKILL);
  t.finish(10);

  auto r = run({tool_path("reset-tracing")}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("removed ftrace lock /var/tmp/.ftrace-lock (PID " + std::to_string(t.pid()) +
                       ", gone)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(slurp(enable), "0\n");
  EXPECT_EQ(slurp(*dir + "/tracing_on"), on_before);
  EXPECT_FALSE(std::filesystem::exists(tracefs::kFtraceLock));
  EXPECT_FALSE(std::filesystem::exists(journal));
  EXPECT_FALSE(std::filesystem::exists(tracefs::kJournalDir));
}

}  // namespace
}  // namespace tracekit::testing
