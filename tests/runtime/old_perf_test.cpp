// The perf fallbacks against a perf_event_open that refuses newer attributes
// as an older kernel does (tests/shims/old_perf.c, preloaded into the
// tools): the feature probe notices each refusal, and the tools still work
// through their fallbacks.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// What a 3.10 kernel's perf lacks of what the tools use (3.7's
// exclude_callchain it has; the shim takes it away too, for -U), the
// PERF_FLAG_FD_CLOEXEC flag of perf_event_open (3.14) included: 3.10.108
// refused every open that passed it.
const std::string kOld =
    "TRACEKIT_TEST_OLD_PERF=context_switch,use_clockid,mmap2,comm_exec,sample_max_stack,"
    "exclude_callchain,lost_samples,fd_cloexec";

std::vector<std::string> old_perf(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/env", "LD_PRELOAD=" + shim_path("old_perf"), kOld});
  return argv;
}

class OldPerfRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on all CPUs";
  }
};

TEST_F(OldPerfRuntime, TheProbeNoticesEachRefusal) {
  auto r = run(old_perf({tool_path("tracekit"), "features"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* f : {"context_switch", "use_clockid", "mmap2", "comm_exec", "sample_max_stack",
                        "exclude_callchain", "lost_samples"}) {
    bool found = false;
    for (const auto& l : lines_of(r.out))
      if (l.rfind(std::string(f) + " ", 0) == 0) {
        found = true;
        EXPECT_NE(l.find(" no "), std::string::npos) << l;
      }
    EXPECT_TRUE(found) << f;
  }
  // Opens without PERF_FLAG_FD_CLOEXEC work (FD_CLOEXEC set by fcntl).
  bool perf = false;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("perf_events ", 0) == 0) {
      perf = true;
      EXPECT_NE(l.find(" yes "), std::string::npos) << l;
    }
  EXPECT_TRUE(perf) << r.out;
}

// profile -U: callchains of both sides (no exclude_callchain), the kernel
// side dropped; short-lived processes resolved from PERF_RECORD_MMAP (no
// MMAP2), COMM without the exec flag; the kernel's own depth.
TEST_F(OldPerfRuntime, ProfileResolvesShortLivedProcessesUserOnly) {
  Running p(old_perf({tool_path("profile"), "-U", "-F", "999", "-f", "3"}));
  ASSERT_TRUE(wait_for_tracing(p.pid(), 1, 20));
  for (int i = 0; i < 3; ++i) {
    auto r = run({workload_path("shortlived")}, 30);
    ASSERT_EQ(r.exit_code, 0);
  }
  auto r = p.finish(30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (auto& [stack, n] : parse_folded(r.out))
    EXPECT_EQ(stack.find("_[k]"), std::string::npos) << stack;
  auto s = shortlived_samples(r.out);
  EXPECT_GT(s.burn, 30u) << r.out;
  EXPECT_GE(s.burn, s.all * 8 / 10) << r.out;
}

// offcputime on a perf without context-switch records and use_clockid:
// switch-ins from sched_switch's next_pid (and wake-ups), perf's own clock.
// The known sleeps are still counted within 10%. (The CPUs are kept busy:
// this VM reports no sched_switch from an idle CPU; see BusyCpus.)
TEST_F(OldPerfRuntime, OffcputimeFallsBackToSchedSwitch) {
  BusyCpus busy;
  Workload w("offcpu");
  Running t(old_perf({tool_path("offcputime"), "-f", "-p", w.pid_str()}));
  ASSERT_TRUE(wait_for_tracing(t.pid(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), 20));
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double took = 0;
  for (const auto& l : w.lines())
    if (l.rfind("took sleep_known ", 0) == 0) took = std::stod(l.substr(17));
  ASSERT_GT(took, 0) << "the workload did not say how long sleep_known took";
  double counted = 0;
  for (auto& [stack, n] : parse_folded(r.out))
    if (stack.find("sleep_known") != std::string::npos) counted += static_cast<double>(n);
  EXPECT_NEAR(counted, took, took * 0.10) << r.out;
}

}  // namespace
}  // namespace tracekit::testing
