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

}  // namespace
}  // namespace tracekit::session
