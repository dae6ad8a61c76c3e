#include "perf/user_unwind.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tracekit::perf {
namespace {

TEST(PerfUserUnwindTest, CallGraphOptionWithAndWithoutKernelOnly) {
  EXPECT_TRUE(call_graph_option("dwarf,512", false).ok());
  EXPECT_EQ(call_graph_option("dwarf,512", false)->stack_size, 512u);
  EXPECT_TRUE(call_graph_option("fp", true).ok());  // -K with fp: nothing to unwind anyway
  auto k = call_graph_option("dwarf", true);
  ASSERT_FALSE(k.ok());
  EXPECT_NE(k.error().message.find("cannot be combined with -K"), std::string::npos);
  EXPECT_FALSE(call_graph_option("dwarf,x", false).ok());
}

TEST(PerfUserUnwindTest, ShortUserStacks) {
  // Code at 0x1000..0x2000; anything else is what a walk past a frame
  // pointer that was none reads (a stack address, data).
  auto code = [](uint64_t a) { return a >= 0x1000 && a < 0x2000; };
  const uint64_t deep[] = {0x1100, 0x1200, 0x1300, 0x1400};
  const uint64_t ends_in_libc_start[] = {0x1100, 0x1200};  // main, its caller
  const uint64_t one[] = {0x1100};
  const uint64_t garbage_second[] = {0x1100, 0x7ffc0000, 0x2f32666172};
  const uint64_t garbage_third[] = {0x1100, 0x1200, 0x7ffc0000, 0x1300};
  const uint64_t garbage_fourth[] = {0x1100, 0x1200, 0x1300, 0x7ffc0000};
  EXPECT_FALSE(short_user_stack({}, code));  // no user side
  EXPECT_FALSE(short_user_stack(deep, code));
  EXPECT_FALSE(short_user_stack(ends_in_libc_start, code));
  EXPECT_TRUE(short_user_stack(one, code));
  EXPECT_TRUE(short_user_stack(garbage_second, code));
  EXPECT_TRUE(short_user_stack(garbage_third, code));
  EXPECT_FALSE(short_user_stack(garbage_fourth, code));
  // Most: more than half, and at least kMinShortUserStacks.
  EXPECT_TRUE(user_stacks_look_truncated(20, 39));
  EXPECT_FALSE(user_stacks_look_truncated(20, 40));
  EXPECT_FALSE(user_stacks_look_truncated(19, 19));
  EXPECT_FALSE(user_stacks_look_truncated(0, 0));
  EXPECT_EQ(kTruncatedUserStacksHint,
            "user stacks look truncated (code built without frame pointers?); try --call-graph "
            "dwarf\n");
}

TEST(PerfUserUnwindTest, CutWarning) {
  EXPECT_EQ(cut_user_stacks_warning(3, 64),
            "WARNING: 3 user stacks were cut at 64 bytes (--call-graph dwarf,64): their outer "
            "frames are missing.\n");
}

TEST(PerfUserUnwindTest, NoUserContextNoFrames) {
  symbols::UserSymbols syms;
  perf_event_attr attr{};
  attr.sample_max_stack = 32;
  UserUnwinder u(CallGraph{CallGraph::Mode::kDwarf, 64}, attr, syms);
  Sample kernel_thread;  // no registers
  kernel_thread.pid = 2;
  EXPECT_TRUE(u.frames(kernel_thread).empty());
  std::ostringstream err;
  u.warn(err);
  EXPECT_TRUE(err.str().empty());
}

}  // namespace
}  // namespace tracekit::perf
