// The top-level guard against a fake tracefs tree and a lock file of the
// test's own: perf-tools' lock protocol (the holder's PID in a file created
// exclusively), stale locks, and the undo of top-level settings. Dead holders
// use pids above the largest pid_max Linux allows (4194304).
#include "tracefs/top_level.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>

#include "fake_tree.hpp"
#include "util/safe_file.hpp"

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

// A missing lock directory (a minimal root's /var without /var/tmp) is made
// as the system has it, mode 01777, in a parent of ours no one else may
// write to; never in one others may write to, nor through a symlink.
TEST_F(TopLevelTest, AMissingLockDirectoryIsMadeOnlyInAParentOfOurs) {
  const std::string var = t_.dir() + "/var";
  fs::create_directory(var);
  ::chmod(var.c_str(), 0755);
  {
    auto g = TopLevel::acquire(t_.dir(), var + "/tmp/.ftrace-lock");
    ASSERT_TRUE(g) << g.error().str();
    struct stat st {};
    ASSERT_EQ(lstat((var + "/tmp").c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 01777u);
    EXPECT_EQ(st.st_uid, geteuid());
    EXPECT_EQ(t_.get("var/tmp/.ftrace-lock"), std::to_string(getpid()) + "\n");
  }
  EXPECT_FALSE(t_.has("var/tmp/.ftrace-lock"));
  EXPECT_TRUE(t_.has("var/tmp"));  // kept, as the system's is

  // A parent others may write to: nothing made, the reason said.
  const std::string open_var = t_.dir() + "/open-var";
  fs::create_directory(open_var);
  ::chmod(open_var.c_str(), 0777);
  auto g = TopLevel::acquire(t_.dir(), open_var + "/tmp/.ftrace-lock");
  ASSERT_FALSE(g);
  EXPECT_EQ(g.error().err, ENOENT);
  EXPECT_NE(g.error().hint.find("its directory is missing"), std::string::npos) << g.error().hint;
  EXPECT_FALSE(t_.has("open-var/tmp"));

  // A symlink as the parent: not followed.
  fs::create_directory_symlink(var, t_.dir() + "/link-var");
  fs::remove(var + "/tmp");
  auto l = TopLevel::acquire(t_.dir(), t_.dir() + "/link-var/tmp/.ftrace-lock");
  ASSERT_FALSE(l);
  EXPECT_FALSE(t_.has("var/tmp"));
}

TEST_F(TopLevelTest, ResetRemovesAStaleLockAndALiveOneOnlyWithForce) {
  auto none = remove_lock(t_.dir(), false, lock_);
  ASSERT_TRUE(none);
  EXPECT_EQ(*none, "");
  t_.put("ftrace-lock", "4194999\n");
  auto stale = remove_lock(t_.dir(), false, lock_);
  ASSERT_TRUE(stale) << stale.error().str();
  EXPECT_EQ(*stale, lock_ + " (PID 4194999, gone)");
  EXPECT_FALSE(fs::exists(lock_));
  const std::string parent = std::to_string(getppid());
  t_.put("ftrace-lock", parent + "\n");
  auto live = remove_lock(t_.dir(), false, lock_);
  ASSERT_TRUE(live);
  EXPECT_EQ(*live, "");
  EXPECT_TRUE(fs::exists(lock_));
  auto forced = remove_lock(t_.dir(), true, lock_);
  ASSERT_TRUE(forced);
  EXPECT_EQ(*forced, lock_ + " (PID " + parent + ", alive)");
  EXPECT_FALSE(fs::exists(lock_));
}

// /var/tmp is anyone's: what a user plants at the lock's name (a symlink to
// /dev/zero, which reset-tracing once read 3.9 GB of; a FIFO, which blocked
// open() for minutes; a symlink to a file naming a live PID) is no lock. It
// is removed, never followed, read without bound or waited on, and the
// lock taken.
TEST_F(TopLevelTest, APlantedLockIsRemovedNeverFollowedReadOrWaitedOn) {
  const std::string victim = t_.dir() + "/victim";
  t_.put("victim", std::to_string(getppid()) + "\n");
  using Plant = void (*)(const std::string& lock, const std::string& victim);
  const std::pair<const char*, Plant> plants[] = {
      {"a symlink", [](const std::string& l, const std::string&) {
         fs::create_symlink("/dev/zero", l);
       }},
      {"a FIFO", [](const std::string& l, const std::string&) {
         ASSERT_EQ(mkfifo(l.c_str(), 0644), 0);
       }},
      {"a symlink", [](const std::string& l, const std::string& v) { fs::create_symlink(v, l); }},
  };
  for (const auto& [kind, plant] : plants) {
    plant(lock_, victim);
    testing::internal::CaptureStderr();
    auto t0 = std::chrono::steady_clock::now();
    {
      auto g = TopLevel::acquire(t_.dir(), lock_);
      EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
      ASSERT_TRUE(g) << kind << ": " << g.error().str();
      EXPECT_FALSE(fs::is_symlink(lock_));
      EXPECT_EQ(t_.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    }
    std::string err = testing::internal::GetCapturedStderr();
    EXPECT_NE(err.find(": removed " + lock_ + ": no ftrace lock but " + kind + " owned by UID " +
                       std::to_string(geteuid())),
              std::string::npos)
        << err;
    EXPECT_FALSE(fs::exists(lock_));
    EXPECT_EQ(t_.get("victim"), std::to_string(getppid()) + "\n");
  }
  // reset-tracing as well.
  ASSERT_EQ(mkfifo(lock_.c_str(), 0644), 0);
  auto removed = remove_lock(t_.dir(), false, lock_);
  ASSERT_TRUE(removed) << removed.error().str();
  EXPECT_EQ(*removed, lock_ + " (no lock: a FIFO owned by UID " + std::to_string(geteuid()) + ")");
  EXPECT_FALSE(fs::exists(lock_));
  fs::create_symlink("/dev/zero", lock_);
  removed = remove_lock(t_.dir(), true, lock_);
  ASSERT_TRUE(removed);
  EXPECT_EQ(*removed,
            lock_ + " (no lock: a symlink owned by UID " + std::to_string(geteuid()) + ")");
  EXPECT_TRUE(fs::exists("/dev/zero"));
}

// A dead holder's journal is replayed into the tracing directory of the
// one replaying it, never into one the journal names, and only its steps
// that stay inside that directory.
TEST_F(TopLevelTest, AStaleHoldersJournalIsReplayedInsideOurTracingDirOnly) {
  const int dead = 4194999;
  ASSERT_TRUE(private_dir(journal_dir(lock_)));
  const std::string journal = top_level_journal(lock_, dead);
  EXPECT_EQ(journal, lock_ + ".journals/top-level.4194999");
  t_.put("outside", "keep\n");
  {
    std::ofstream j(journal);
    j << "/etc\n"                        // the old format's directory line: ignored
      << "w\ttracing_thresh\t0\n"
      << "w\t../outside\tpwned\n"
      << "w\t" << t_.dir() << "/outside\tpwned\n"
      << "w\toptions/../../outside\tpwned\n"
      << "w\toptions/record-cmd\t1\n";
  }
  chmod(journal.c_str(), 0600);
  t_.put("ftrace-lock", std::to_string(dead) + "\n");
  t_.log.clear();
  auto removed = remove_lock(t_.dir(), false, lock_);
  ASSERT_TRUE(removed);
  EXPECT_EQ(t_.writes(), (Lines{"write T/options/record-cmd 1", "write T/tracing_thresh 0"}));
  EXPECT_EQ(t_.get("outside"), "keep\n");
  EXPECT_FALSE(fs::exists(journal));
}

// A journal that others can write to, or with more than one link, is not
// ours as it is: removed unread.
TEST_F(TopLevelTest, AJournalOthersCouldHaveWrittenIsNotReplayed) {
  ASSERT_TRUE(private_dir(journal_dir(lock_)));
  for (int how = 0; how < 3; ++how) {
    const std::string journal = top_level_journal(lock_, 4194999);
    {
      std::ofstream j(journal);
      j << "w\ttracing_thresh\t5\n";
    }
    if (how == 0) chmod(journal.c_str(), 0666);
    if (how == 1) {
      ASSERT_EQ(link(journal.c_str(), (t_.dir() + "/second").c_str()), 0);
    }
    if (how == 2) {
      fs::remove(journal);
      fs::create_symlink(t_.dir() + "/tracing_thresh", journal);
    }
    t_.log.clear();
    EXPECT_EQ(replay_journal(journal, t_.dir()), 0u) << how;
    EXPECT_TRUE(t_.writes().empty()) << how;
    EXPECT_FALSE(fs::exists(journal)) << how;
    fs::remove(t_.dir() + "/second");
  }
  EXPECT_EQ(t_.get("tracing_thresh"), "0\n");
}

// keep_journal never writes through what is at the journal's name.
TEST_F(TopLevelTest, TheJournalIsCreatedAfreshNeverThroughALink) {
  ASSERT_TRUE(private_dir(journal_dir(lock_)));
  const std::string journal = top_level_journal(lock_, getpid());
  t_.put("victim", "keep\n");
  fs::create_symlink(t_.dir() + "/victim", journal);
  {
    UndoLog log(t_.dir(), {});
    ASSERT_TRUE(log.keep_journal(journal));
    ASSERT_TRUE(log.set("tracing_thresh", "7"));
    struct stat st {};
    ASSERT_EQ(lstat(journal.c_str(), &st), 0);
    EXPECT_TRUE(S_ISREG(st.st_mode));
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    log.undo();
  }
  EXPECT_EQ(t_.get("victim"), "keep\n");
  EXPECT_FALSE(fs::exists(journal));
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
