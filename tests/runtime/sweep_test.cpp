// Every tool removes what killed runs left in tracefs when it starts (the
// README's promise): a child sets up like a tool (an instance with a
// trigger, a uprobe group) and is SIGKILLed; then one run of the tool must
// leave none of it. profile needs no tracefs and sweeps only a tracefs that
// is mounted, as it is here.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::testing {
namespace {

namespace fs = std::filesystem;

class SweepRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs control files";
    auto d = tracefs::tracing_dir();
    ASSERT_TRUE(d) << d.error().str();
    top_ = *d;
    ours_.insert(getpid());
    before_ = snapshot();
  }
  void TearDown() override {
    if (top_.empty()) return;
    tracefs::remove_leftovers(top_);  // whatever a failed test left
    EXPECT_EQ(before_, snapshot()) << "tracefs changed by the test";
  }

  std::vector<std::string> snapshot() const {
    std::vector<std::string> s = tracefs_objects(top_, ours_);
    std::sort(s.begin(), s.end());
    return s;
  }

  // A killed run's leftovers: instance, probe group, triggers.
  TracingChild dead_run() {
    TracingChild c = start_tracing_child(top_);
    if (c.pid > 0) {
      ours_.insert(c.pid);
      kill_and_reap(c.pid);
    }
    return c;
  }

  bool gone(const TracingChild& c) const {
    return !fs::exists(top_ + "/instances/" + c.instance) &&
           !fs::exists(top_ + "/events/" + c.group) &&
           !contains(slurp(top_ + "/dynamic_events"), c.group + "/");
  }

  std::string top_;
  std::set<int> ours_;
  std::vector<std::string> before_;
};

TEST_F(SweepRuntime, EveryToolRemovesWhatAKilledRunLeft) {
  const std::vector<std::vector<std::string>> runs = {
      {"profile", "1"},
      {"profile", "-f", "-U", "1"},
      {"offcputime", "1"},
      {"stackcount", "-K", "-D", "1", "t:syscalls:sys_enter_getppid"},
      {"stacksnoop", "-d", "1", "t:syscalls:sys_enter_getppid"},
      {"reset-tracing", "-q"},
  };
  for (auto args : runs) {
    std::string name = args[0];
    TracingChild c = dead_run();
    ASSERT_FALSE(c.instance.empty()) << "the child could not set up";
    ASSERT_FALSE(gone(c));
    args[0] = tool_path(name);
    auto r = run(args, 60);
    EXPECT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_TRUE(gone(c)) << name << " left " << c.instance << " and " << c.group;
  }
}

}  // namespace
}  // namespace tracekit::testing
