// The pure part of session/capture: which tracefs files let an instance
// follow a process's forks.
#include "session/capture.hpp"

#include <gtest/gtest.h>

#include <set>

namespace tracekit::session {
namespace {

TEST(CaptureTest, CanFollowForksNeedsThePidListsAndTheirForkOptions) {
  auto has_only = [](std::set<std::string> files) {
    return [files](const std::string& rel) { return files.count(rel) > 0; };
  };
  const std::set<std::string> events{"set_event_pid", "options/event-fork"};
  EXPECT_TRUE(can_follow_forks(has_only(events), false));
  EXPECT_FALSE(can_follow_forks(has_only(events), true));  // functions need their own list
  EXPECT_TRUE(can_follow_forks(has_only({"set_event_pid", "options/event-fork", "set_ftrace_pid",
                                         "options/function-fork"}),
                               true));
  EXPECT_FALSE(can_follow_forks(has_only({"set_event_pid"}), false));  // 4.4 before event-fork
  EXPECT_FALSE(can_follow_forks(has_only({}), false));                 // before 4.4
}

// 4 MiB rings while all of them fit in 32 MiB, 1 MiB from 32 CPUs on.
TEST(CaptureTest, PerfRingsShrinkAsCpusAreAdded) {
  EXPECT_EQ(perf_ring_pages(0), 1024u);
  EXPECT_EQ(perf_ring_pages(1), 1024u);
  EXPECT_EQ(perf_ring_pages(2), 1024u);
  EXPECT_EQ(perf_ring_pages(8), 1024u);
  EXPECT_EQ(perf_ring_pages(9), 512u);
  EXPECT_EQ(perf_ring_pages(16), 512u);
  EXPECT_EQ(perf_ring_pages(24), 256u);
  EXPECT_EQ(perf_ring_pages(32), 256u);
  EXPECT_EQ(perf_ring_pages(512), 256u);
}

}  // namespace
}  // namespace tracekit::session
