// profile at the edge of what the kernel allows: -c below the kernel's
// sample rate limit is refused as -F above it is, and at the highest rate
// allowed SIGTERM still ends a run at once (the read loop checks for a stop
// between bounded drains, and before each record).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

class ProfileRateRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: system-wide perf_event_open";
    std::string max = slurp("/proc/sys/kernel/perf_event_max_sample_rate");
    if (max.empty()) GTEST_SKIP() << "no kernel.perf_event_max_sample_rate";
    max_rate_ = std::stoul(max);
    ASSERT_GT(max_rate_, 0u);
    min_count_ = (1000000000ul + max_rate_ - 1) / max_rate_;
  }
  unsigned long max_rate_ = 0, min_count_ = 0;
};

TEST_F(ProfileRateRuntime, CountAboveTheKernelLimitIsRefused) {
  auto r = run({tool_path("profile"), "-c", "1", "2"}, 20);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "profile: count 1 (a sample every 1 ns of CPU time) is above this kernel's "
            "limit of " +
                std::to_string(max_rate_) + " samples per second (use -c " +
                std::to_string(min_count_) +
                " or more, or raise kernel.perf_event_max_sample_rate with sysctl)\n");
}

// One CPU at the highest rate allowed (the other stays free for the test and
// for others); the samples are of a sleeping process, so the report is
// empty and the time measured is the loop's.
TEST_F(ProfileRateRuntime, SigtermEndsARunAtTheHighestRateAtOnce) {
  Workload w("stackwork");  // waits on its stdin: never on CPU
  Running t(
      {tool_path("profile"), "-U", "-C", "0", "-c", std::to_string(min_count_), "-p", w.pid_str()});
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20)) << "no header";
  t.wait_for_stdout("never printed", 1.0);  // let the rings fill
  auto start = std::chrono::steady_clock::now();
  t.signal(SIGTERM);
  auto r = t.finish(60);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_LT(secs, 1.0) << "SIGTERM took " << secs << " s to end the run";
  EXPECT_FALSE(contains(r.err, "-F")) << "the warnings name -c, the option given: " << r.err;
}

}  // namespace
}  // namespace tracekit::testing
