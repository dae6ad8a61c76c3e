#include "symbols/stack_roots.hpp"

#include "report/report.hpp"

#include <gtest/gtest.h>

namespace tracekit::symbols {
namespace {

TEST(StackRootsTest, GlibcAndMuslStarts) {
  for (const char* n : {"_start", "__libc_start_main", "__libc_start_call_main", "start_thread",
                        "__clone", "__clone3", "clone3", "libc_start_main_stage2"})
    EXPECT_TRUE(is_stack_root(n)) << n;
  for (const char* n : {"main", "register_tm_clones", "", "start", "_start_thread"})
    EXPECT_FALSE(is_stack_root(n)) << n;
}

// The static workloads' stacks as the frame-pointer walk gave them (3.10,
// 4.4): leaf first, two made-up frames past __libc_start_call_main.
TEST(StackRootsTest, CutsAfterTheLeafmostRoot) {
  report::FrameTable t;
  auto id = [&](const char* name) {
    report::Frame f;
    f.name = name;
    return t.add(f);
  };
  const auto loop = id("syscall_loop"), main = id("main"), start = id("__libc_start_call_main"),
             tm = id("register_tm_clones"), unknown = id("");
  std::vector<report::Record> records(3);
  std::vector<report::FrameTable::Id> bad{loop, main, start, tm, unknown};
  records[0].user = t.stack(bad);
  std::vector<report::FrameTable::Id> good{loop, main, start};
  records[1].user = t.stack(good);
  std::vector<report::FrameTable::Id> rootless{loop, main};
  records[2].user = t.stack(rootless);
  records[2].kernel = t.stack(rootless);  // kernel sides are left alone
  report::trim_past_stack_roots(records, t);
  EXPECT_EQ(records[0].user.size, 3u);
  EXPECT_EQ(records[1].user.size, 3u);
  EXPECT_EQ(records[2].user.size, 2u);
  EXPECT_EQ(records[2].kernel.size, 2u);
  // An absent side stays absent.
  std::vector<report::Record> none(1);
  trim_past_stack_roots(none, t);
  EXPECT_EQ(none[0].user.state, report::StackState::kAbsent);
}

}  // namespace
}  // namespace tracekit::symbols
