// Ending runs: SIGQUIT is a stop like SIGTERM; a teardown of many events says
// so and a second Ctrl-C ends it at once (the next run's sweep removes the
// rest); the start-up sweep of a killed run's leftovers says what it removes
// and gives way to Ctrl-C.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// The C library's str* functions, about 60 uprobes: disabling each uprobe
// event waits for the kernel's synchronisation of uprobe users (30-95 ms on
// this kernel), seconds in all, on every kernel. (Tracepoints no longer
// do: stackcount -K detaches 360 of them in about 0.1 s here, too short
// for a signal to land in for sure.)
const char* kManyEvents = "c:str*";

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

class StopRuntime : public TracingTest {
 protected:
  // reset-tracing -q: what an interrupted run left goes.
  void reset() {
    auto r = run({tool_path("reset-tracing"), "-q"}, 120);
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(StopRuntime, SigquitEndsARunLikeSigterm) {
  for (const char* backend : {"ftrace", "perf"}) {
    Running t({tool_path("stackcount"), "--backend", backend, "t:sched:sched_switch"});
    ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 30)) << backend;
    t.signal(SIGQUIT);
    auto r = t.finish(30);
    EXPECT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    EXPECT_NE(r.out.find("Detaching..."), std::string::npos) << r.out;
    EXPECT_EQ(tracefs_snapshot(), before_) << backend;
  }
}

TEST_F(StopRuntime, SecondCtrlCEndsASlowDetachAtOnce) {
  // One Ctrl-C: the whole detach, announced.
  Running once({tool_path("stackcount"), "-K", kManyEvents});
  ASSERT_TRUE(once.wait_for_stdout("Hit Ctrl-C to end.\n", 60));
  auto t0 = std::chrono::steady_clock::now();
  once.signal(SIGINT);
  auto r1 = once.finish(120);
  double full = seconds_since(t0);
  EXPECT_EQ(r1.exit_code, 0) << r1.err;
  EXPECT_NE(r1.err.find(" events (Ctrl-C again"), std::string::npos) << r1.err;
  EXPECT_EQ(tracefs_snapshot(), before_);

  // Two: out at the second, long before the detach would have ended.
  Running twice({tool_path("stackcount"), "-K", kManyEvents});
  ASSERT_TRUE(twice.wait_for_stdout("Hit Ctrl-C to end.\n", 60));
  twice.signal(SIGINT);
  ASSERT_TRUE(twice.wait_for_stderr(" events (Ctrl-C again", 30));
  auto t1 = std::chrono::steady_clock::now();
  twice.signal(SIGINT);
  auto r2 = twice.finish(120);
  double second = seconds_since(t1);
  EXPECT_EQ(r2.exit_code, 128 + SIGINT) << r2.err;
  EXPECT_NE(r2.err.find("stopped at once (second signal)"), std::string::npos) << r2.err;
  std::cout << "detach after one Ctrl-C: " << full << " s; exit after the second: " << second
            << " s\n";
  EXPECT_LT(second, std::max(1.0, full / 2)) << "full detach took " << full << " s";
  EXPECT_NE(tracefs_snapshot(), before_) << "the rest is left for the next run";
  reset();
}

TEST_F(StopRuntime, StartupSweepSaysWhatItRemovesAndGivesWayToCtrlC) {
  // The Ctrl-C must land during the sweep (seconds of uprobe
  // synchronisations); a sweep that ends first (seen once in 9 runs) shows
  // only that the signal came late: that attempt is set aside and the case
  // made again, up to 3 times.
  for (int attempt = 1;; ++attempt) {
    Running killed({tool_path("stackcount"), "-K", kManyEvents});
    ASSERT_TRUE(killed.wait_for_stdout("Hit Ctrl-C to end.\n", 60));
    killed.signal(SIGKILL);
    killed.finish(10);
    ASSERT_NE(tracefs_snapshot(), before_) << "a SIGKILLed run leaves its instance";

    Running next({tool_path("stackcount"), "-K", "-D", "1", "t:sched:sched_switch"});
    ASSERT_TRUE(next.wait_for_stderr("stackcount: removing instance tracekit_", 30)) << next.pid();
    auto t0 = std::chrono::steady_clock::now();
    next.signal(SIGINT);
    auto r = next.finish(120);
    double took = seconds_since(t0);
    EXPECT_EQ(r.exit_code, 0) << r.err;  // as any Ctrl-C
    if (r.out.find("Tracing") != std::string::npos && attempt < 3) {
      std::cout << "attempt " << attempt << ": the sweep ended before the Ctrl-C landed ("
                << took << " s); again\n";
      reset();
      continue;
    }
    // (About 60 events: more than the capture gives triggers, so the dead run
    // took its stacks from the instance's stacktrace option and left no
    // trigger; its uprobes make the sweep slow.)
    EXPECT_NE(r.err.find("stackcount: removing instance tracekit_"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(", left by a dead run...\n"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("stackcount: interrupted; the rest is removed by the next run or by "
                         "reset-tracing"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("Tracing"), std::string::npos) << "it must not go on to trace";
    std::cout << "exit after Ctrl-C during the sweep: " << took << " s\n";
    EXPECT_LT(took, 2.0);
    reset();
    return;
  }
}

}  // namespace
}  // namespace tracekit::testing
