#include "perf/user_unwind.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

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

__attribute__((noinline)) int own_code(int x) { return x * 3 + 1; }

// Issue 38: the stacks of a process that exited before its mappings were
// read were all taken for short ones, and the hint blamed frame pointers.
TEST(PerfUserUnwindTest, StacksOfAProcessWithUnknownMappingsDoNotHint) {
  symbols::UserSymbols syms;
  const uint64_t code = reinterpret_cast<uint64_t>(&own_code);
  const uint64_t one_frame[] = {code, 0x10};  // the second is no code
  ShortUserStacks gone;
  constexpr uint32_t kGone = 1u << 30;  // above any pid_max: nothing is known of it
  for (uint64_t i = 0; i < 2 * kMinShortUserStacks; ++i) gone.note(kGone, one_frame, syms);
  std::ostringstream none;
  gone.hint(none);
  EXPECT_EQ(none.str(), "");
  // The same stacks in a process whose code is known do look short.
  ShortUserStacks own;
  for (uint64_t i = 0; i < 2 * kMinShortUserStacks; ++i)
    own.note(static_cast<uint32_t>(getpid()), one_frame, syms);
  std::ostringstream hinted;
  own.hint(hinted);
  EXPECT_EQ(hinted.str(), kTruncatedUserStacksHint);
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
