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
