// offcputime and stackcount --call-graph dwarf: a thread of code without
// frame pointers (tests/workloads/nofp.c) blocking inside the C library,
// whose Debian build has no frame pointers either.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

class OffcputimeDwarfRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on sched_switch";
  }
};
using StackcountDwarfRuntime = OffcputimeDwarfRuntime;

// The caller chain of the leaf, root first, then the leaf's call into libc.
const std::vector<std::string> kChain = {"main",   "nofp_1", "nofp_2",    "nofp_3",
                                         "nofp_4", "nofp_5", "nofp_leaf", "usleep"};

struct Share {
  unsigned long whole = 0, all = 0;  // microseconds off CPU, or events
};

Share chain_share(const std::string& folded) {
  Share s;
  for (auto& [stack, us] : parse_folded(folded)) {
    auto fr = frames_of(stack);
    s.all += us;
    if (std::search(fr.begin(), fr.end(), kChain.begin(), kChain.end()) != fr.end()) s.whole += us;
  }
  return s;
}

TEST_F(OffcputimeDwarfRuntime, CallersAppearAboveTheLibcFrames) {
  // Without context-switch records (the fallback pass) the switch-ins come
  // from sched_switch, which this VM does not report from an idle CPU: the
  // CPUs are kept busy meanwhile, as in offcputime_test.cpp.
  auto busy = kernel::forced_off(kernel::Feature::kContextSwitch) ? std::make_unique<BusyCpus>()
                                                                  : nullptr;
  Workload w("nofp", {"0", "sleep"});
  auto dwarf = run(
      {tool_path("offcputime"), "--call-graph", "dwarf", "-U", "-f", "-p", w.pid_str(), "2"}, 60);
  ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err;
  auto d = chain_share(dwarf.out);
  ASSERT_GT(d.all, 1000000u) << dwarf.out;  // about 2 s asleep
  EXPECT_GE(d.whole * 10, d.all * 9) << dwarf.out;
  // Every frame known, the first period's too (unwound while its modules
  // were being reported).
  EXPECT_EQ(dwarf.out.find("[unknown]"), std::string::npos) << dwarf.out;
  // The control: the frame-pointer walk stops in libc.
  auto fp = run({tool_path("offcputime"), "-U", "-f", "-p", w.pid_str(), "2"}, 60);
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  auto f = chain_share(fp.out);
  ASSERT_GT(f.all, 1000000u) << fp.out;
  EXPECT_LT(f.whole * 10, f.all * 9) << fp.out;
  // ... and says so (dwarf mode does not).
  EXPECT_NE(fp.err.find("user stacks look truncated (code built without frame pointers?); try "
                        "--call-graph dwarf\n"),
            std::string::npos)
      << fp.err;
  EXPECT_EQ(dwarf.err.find("user stacks look truncated"), std::string::npos) << dwarf.err;
}

TEST_F(OffcputimeDwarfRuntime, BadCallGraphsAreRejected) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--call-graph", "frames", "1"}, "invalid --call-graph 'frames'"},
           {{"--call-graph", "dwarf", "-K", "1"}, "cannot be combined with -K"}}) {
    std::vector<std::string> argv = {tool_path("offcputime")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

TEST_F(StackcountDwarfRuntime, SchedSwitchStacksThroughLibc) {
  Workload w("nofp", {"0", "sleep"});
  auto dwarf = run({tool_path("stackcount"), "--call-graph", "dwarf", "-U", "-f", "-p", w.pid_str(),
                    "-D", "2", "t:sched:sched_switch"},
                   60);
  ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err;
  auto d = chain_share(dwarf.out);
  ASSERT_GT(d.all, 100u) << dwarf.out;  // a switch every 2 ms
  EXPECT_GE(d.whole * 10, d.all * 9) << dwarf.out;
  EXPECT_EQ(dwarf.out.find("[unknown]"), std::string::npos) << dwarf.out;
  // The control: frame pointers stop in libc.
  auto fp = run(
      {tool_path("stackcount"), "-U", "-f", "-p", w.pid_str(), "-D", "2", "t:sched:sched_switch"},
      60);
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  auto f = chain_share(fp.out);
  ASSERT_GT(f.all, 100u) << fp.out;
  EXPECT_LT(f.whole * 10, f.all * 9) << fp.out;
}

TEST_F(StackcountDwarfRuntime, DwarfNeedsThePerfBackend) {
  auto k = run(
      {tool_path("stackcount"), "--call-graph", "dwarf", "-K", "-D", "1", "t:sched:sched_switch"},
      30);
  EXPECT_EQ(k.exit_code, 2) << k.err;
  EXPECT_NE(k.err.find("cannot be combined with -K"), std::string::npos) << k.err;
  auto f = run({tool_path("stackcount"), "--call-graph", "dwarf", "--backend", "ftrace", "-D", "1",
                "t:sched:sched_switch"},
               30);
  EXPECT_EQ(f.exit_code, 1) << f.err;
  EXPECT_NE(f.err.find("--call-graph dwarf needs the perf backend"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace tracekit::testing
