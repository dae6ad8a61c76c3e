#include <gtest/gtest.h>

#include "session/capture.hpp"

namespace tracekit::session {
namespace {

// Issue 38: "254591 events lost" where 127,295 events were refused whole
// (event and stack, through a stacktrace trigger) and one more was written
// but its stack refused.
TEST(StacksnoopLostTest, CountsEventsNotRecords) {
  EXPECT_EQ(lost_events(254591, 1, 2), 127295u);
  // The measured runs here: 400,000 getppid calls into a full buffer,
  // 115,193 events read (one without its stack).
  EXPECT_EQ(lost_events(569615, 1, 2), 284807u);  // stacktrace trigger
  EXPECT_EQ(lost_events(284808, 1, 1), 284807u);  // stacktrace option
  EXPECT_EQ(lost_events(0, 0, 2), 0u);
  EXPECT_EQ(lost_events(3, 0, 2), 2u);  // a stack refused alone: rounded up
  EXPECT_EQ(lost_events(1, 4, 2), 0u);  // stackless events cut by the stop, not drops
}

}  // namespace
}  // namespace tracekit::session
