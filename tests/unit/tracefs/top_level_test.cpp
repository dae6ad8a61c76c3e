// The top-level guard against a fake tracefs tree and a lock file of the
// test's own: perf-tools' lock protocol (the holder's PID in a file created
// exclusively), stale locks, and the undo of top-level settings. Dead holders
// use pids above the largest pid_max Linux allows (4194304).
#include "tracefs/top_level.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "fake_tree.hpp"

namespace tracekit::tracefs {
namespace {

namespace fs = std::filesystem;
using Lines = std::vector<std::string>;

class TopLevelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    lock_ = t_.dir() + "/ftrace-lock";  // beside the tree, removed with it
    t_.put("tracing_thresh", "0\n");
    t_.put("options/record-cmd", "1\n");
  }
  FakeTree t_;
  std::string lock_;
};

TEST_F(TopLevelTest, HoldsTheLockWithItsPidAndUndoesOnRelease) {
  {
    auto g = TopLevel::acquire(t_.dir(), lock_);
    ASSERT_TRUE(g) << g.error().str();
    EXPECT_EQ(t_.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    ASSERT_TRUE(g->set("tracing_thresh", "100"));
    ASSERT_TRUE(g->set_option("record-cmd", false));
    EXPECT_EQ(t_.get("tracing_thresh"), "100\n");
    auto missing = g->set_option("no_such_option", true);
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "no such trace option no_such_option");
    TopLevel moved(std::move(*g));  // the moved-from guard undoes nothing
  }
  EXPECT_EQ(t_.writes(), (Lines{"write T/tracing_thresh 100", "write T/options/record-cmd 0",
                                "write T/options/record-cmd 1", "write T/tracing_thresh 0"}));
  EXPECT_FALSE(fs::exists(lock_));
}

TEST_F(TopLevelTest, ALiveHolderIsNamedAndItsLockKept) {
  // perf-tools writes "$$\n"; our parent is alive.
  t_.put("ftrace-lock", std::to_string(getppid()) + "\n");
  auto g = TopLevel::acquire(t_.dir(), lock_);
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().err, EBUSY);
  EXPECT_EQ(g.error().message, "ftrace is in use by PID " + std::to_string(getppid()));
  EXPECT_EQ(g.error().path, lock_);
  EXPECT_EQ(t_.get("ftrace-lock"), std::to_string(getppid()) + "\n");
  // A second guard of one process is refused as well: the lock is not reentrant.
  fs::remove(lock_);
  auto first = TopLevel::acquire(t_.dir(), lock_);
  ASSERT_TRUE(first);
  EXPECT_FALSE(TopLevel::acquire(t_.dir(), lock_));
}

TEST_F(TopLevelTest, AStaleLockIsTakenOver) {
  for (const std::string stale : {"4194999\n", "", "garbage\n"}) {
    t_.put("ftrace-lock", stale);
    {
      auto g = TopLevel::acquire(t_.dir(), lock_);
      ASSERT_TRUE(g) << "lock text \"" << stale << "\": " << g.error().str();
      EXPECT_EQ(t_.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    }
    EXPECT_FALSE(fs::exists(lock_));
  }
}

TEST_F(TopLevelTest, ALockTakenOverBySomeoneElseIsLeftToThem) {
  {
    auto g = TopLevel::acquire(t_.dir(), lock_);
    ASSERT_TRUE(g);
    // reset-tracing -f removed ours and another tracer took it.
    t_.put("ftrace-lock", std::to_string(getppid()) + "\n");
  }
  EXPECT_EQ(t_.get("ftrace-lock"), std::to_string(getppid()) + "\n");
}

TEST_F(TopLevelTest, AnUnwritableLockSaysSo) {
  auto g = TopLevel::acquire(t_.dir(), t_.dir() + "/no/such/dir/lock");
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().err, ENOENT);
  EXPECT_EQ(g.error().message, "cannot write the ftrace lock");
}

TEST_F(TopLevelTest, ResetRemovesAStaleLockAndALiveOneOnlyWithForce) {
  auto none = remove_lock(false, lock_);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, "");
  t_.put("ftrace-lock", "4194999\n");
  auto stale = remove_lock(false, lock_);
  ASSERT_TRUE(stale) << stale.error().str();
  EXPECT_EQ(*stale, lock_ + " (PID 4194999, gone)");
  EXPECT_FALSE(fs::exists(lock_));
  const std::string parent = std::to_string(getppid());
  t_.put("ftrace-lock", parent + "\n");
  auto live = remove_lock(false, lock_);
  ASSERT_TRUE(live);
  EXPECT_EQ(*live, "");
  EXPECT_TRUE(fs::exists(lock_));
  auto forced = remove_lock(true, lock_);
  ASSERT_TRUE(forced);
  EXPECT_EQ(*forced, lock_ + " (PID " + parent + ", alive)");
  EXPECT_FALSE(fs::exists(lock_));
}

TEST(TopLevelLockText, Holder) {
  EXPECT_EQ(lock_holder("1234\n"), 1234);
  EXPECT_EQ(lock_holder(" 77 "), 77);
  EXPECT_EQ(lock_holder(""), 0);
  EXPECT_EQ(lock_holder("-5\n"), 0);
  EXPECT_EQ(lock_holder("12ab\n"), 0);
}

}  // namespace
}  // namespace tracekit::tracefs
