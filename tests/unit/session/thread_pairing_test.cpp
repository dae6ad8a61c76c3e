#include "session/thread_pairing.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tracekit::session {
namespace {

TEST(ThreadPairingTest, EachExitTakesItsThreadsEntry) {
  ThreadPairing<std::string> p;
  p.entry(1, "a");
  p.entry(2, "b");
  p.entry(1, "c");  // replaces "a": its exit was lost
  EXPECT_EQ(p.pending(), 2u);
  EXPECT_EQ(p.exit(2), "b");
  EXPECT_EQ(p.exit(2), std::nullopt);
  EXPECT_EQ(p.exit(1), "c");
  EXPECT_EQ(p.exit(3), std::nullopt);
  EXPECT_EQ(p.pending(), 0u);
}

}  // namespace
}  // namespace tracekit::session
