// The perf fallbacks against a perf_event_open that refuses newer attributes
// as an older kernel does (tests/shims/old_perf.c, preloaded into the
// tools): the feature probe notices each refusal, and the tools still work
// through their fallbacks, or name the missing feature.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// What a 3.10 kernel's perf lacks of what the tools use (3.7's
// exclude_callchain it has; the shim takes it away too, for -U).
const std::string kOld =
    "TRACEKIT_TEST_OLD_PERF=context_switch,use_clockid,mmap2,comm_exec,sample_max_stack,"
    "exclude_callchain";

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
                        "exclude_callchain"}) {
    bool found = false;
    for (const auto& l : lines_of(r.out))
      if (l.rfind(std::string(f) + " ", 0) == 0) {
        found = true;
        EXPECT_NE(l.find(" no "), std::string::npos) << l;
      }
    EXPECT_TRUE(found) << f;
  }
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

// offcputime has no fallback for context-switch records yet: it names the
// missing feature rather than an errno.
TEST_F(OldPerfRuntime, OffcputimeNamesTheMissingFeature) {
  auto r = run(old_perf({tool_path("offcputime"), "1"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("this kernel has no perf context-switch records (PERF_RECORD_SWITCH)"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("Invalid argument"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tracekit::testing
