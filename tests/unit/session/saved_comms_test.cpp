// The kernel's saved_cmdlines table of task names, as session::SavedComms
// reads it.
#include "session/saved_comms.hpp"

#include <gtest/gtest.h>

namespace tracekit::session {
namespace {

TEST(SavedCommsTest, SavedCmdlines) {
  auto m = parse_saved_cmdlines("1 systemd\n4242 kworker/0:1 x\nbad line\n\n77\n");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m[1], "systemd");
  EXPECT_EQ(m[4242], "kworker/0:1 x");
}

// A comm renamed to hold a newline goes on over the next line of
// saved_cmdlines: the line continues it while the two fit in a comm (15
// bytes).
TEST(SavedCommsTest, SavedCmdlinesWithNewlinesInComms) {
  auto m = parse_saved_cmdlines("42 ev\x1b[2J\nil\n43 bash\n44 a\nb\nc\n45 long-name-here\nxy\n");
  EXPECT_EQ(m.size(), 4u);
  EXPECT_EQ(m[42], "ev\x1b[2J\nil");
  EXPECT_EQ(m[43], "bash");
  EXPECT_EQ(m[44], "a\nb\nc");
  EXPECT_EQ(m[45], "long-name-here");  // "xy" would make it 17 bytes
}

}  // namespace
}  // namespace tracekit::session
