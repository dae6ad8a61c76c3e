#include "report/stack_records.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "output/stack_report.hpp"

namespace tracekit::report {
namespace {

symbols::KernelSymbols fake_kernel() {
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 T entry_SYSCALL_64\n"
      "ffffffff81000200 T do_syscall_64\n"
      "ffffffff81000300 t __x64_sys_getppid\n");
  return symbols::KernelSymbols::parse(in);
}

TEST(ReportStackRecordsTest, ResolvesKernelFramesAndReturnAddresses) {
  auto k = fake_kernel();
  report::FrameTable t;
  StackResolver r(&k, nullptr, t);
  // Leaf exact; a return address at the start of do_syscall_64 belongs to the
  // call in entry_SYSCALL_64 before it.
  std::vector<uint64_t> frames{0xffffffff81000310, 0xffffffff81000200};
  report::Stack s = r.kernel(frames);
  EXPECT_EQ(s.state, report::StackState::kPresent);
  auto ids = t.ids(s);
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(t[ids[0]].name, "__x64_sys_getppid");
  EXPECT_EQ(t[ids[0]].offset, 0x10u);
  EXPECT_EQ(t[ids[1]].name, "entry_SYSCALL_64");
  EXPECT_EQ(t[ids[1]].addr, 0xffffffff81000200u);
}

// Each frame is resolved and stored once: the same address in the same
// place of another stack is the same frame; as a leaf (not a return
// address), or in another process, it is another.
TEST(ReportStackRecordsTest, StoresEachFrameOnce) {
  auto k = fake_kernel();
  report::FrameTable t;
  StackResolver r(&k, nullptr, t);
  std::vector<uint64_t> a{0xffffffff81000310, 0xffffffff81000200};
  std::vector<uint64_t> b{0xffffffff81000300, 0xffffffff81000200};
  std::vector<uint64_t> c{0xffffffff81000200};
  report::Stack sa = r.kernel(a), sb = r.kernel(b), sc = r.kernel(c);
  auto ia = t.ids(sa), ib = t.ids(sb), ic = t.ids(sc);
  EXPECT_EQ(ia[1], ib[1]);
  EXPECT_NE(ia[0], ib[0]);
  EXPECT_NE(ic[0], ia[1]);
  EXPECT_EQ(t[ic[0]].name, "do_syscall_64");  // a leaf: not the call before it
  EXPECT_EQ(t.size(), 4u);
  std::vector<uint64_t> u{0x401000, 0x401100};
  report::Stack s1 = r.user(1, u), s1again = r.user(1, u), s2 = r.user(2, u);
  auto u1 = t.ids(s1), u1again = t.ids(s1again), u2 = t.ids(s2);
  EXPECT_EQ(u1[0], u1again[0]);
  EXPECT_NE(u1[0], u2[0]);
  EXPECT_EQ(t.size(), 8u);
}

TEST(ReportStackRecordsTest, UnresolvedFramesHaveNoName) {
  report::FrameTable t;
  StackResolver r(nullptr, nullptr, t);
  std::vector<uint64_t> frames{0x1234};
  auto ids = t.ids(r.user(42, frames));
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_TRUE(t[ids[0]].name.empty());
  EXPECT_EQ(t[ids[0]].addr, 0x1234u);
}

TEST(ReportStackRecordsTest, BuildsOneRecordPerKeyWithStates) {
  auto k = fake_kernel();
  report::FrameTable t;
  StackResolver r(&k, nullptr, t);
  aggregate::StackCounts counts(/*stacks=*/1, /*keys=*/10);
  std::vector<uint64_t> ks{0xffffffff81000310};
  std::vector<uint64_t> us{0x401000, 0x401100};
  std::span<const uint64_t> kspan(ks), uspan(us), empty;
  // The stack table holds one stack: the user stack of the first add is lost.
  counts.add(7, "app", kspan, uspan, 3);
  counts.add(7, "app", kspan, uspan, 2);
  counts.add(0, "swapper/1", kspan, empty, 5);
  counts.add(9, "user", std::nullopt, std::nullopt, 1);
  Missing missing;
  auto recs = build_records(counts, r, &missing);
  ASSERT_EQ(recs.size(), 3u);
  output::sort_by_value(recs);
  EXPECT_EQ(recs[0].comm, "user");
  EXPECT_EQ(recs[0].kernel.state, report::StackState::kAbsent);
  EXPECT_EQ(recs[0].user.state, report::StackState::kAbsent);
  EXPECT_EQ(recs[1].comm, "app");
  EXPECT_EQ(recs[1].value, 5u);
  EXPECT_EQ(recs[1].pid, 7);
  EXPECT_EQ(recs[1].kernel.state, report::StackState::kPresent);
  EXPECT_EQ(recs[1].user.state, report::StackState::kMissed);
  EXPECT_EQ(recs[2].comm, "swapper/1");
  EXPECT_EQ(recs[2].user.state, report::StackState::kAbsent);  // empty: no user side
  EXPECT_EQ(missing.stacks, 1u);
}

TEST(ReportStackRecordsTest, PidLeftOutWhenNotKeyed) {
  aggregate::StackCounts counts(4, 4);
  counts.add(7, "app", std::nullopt, std::nullopt, 1);
  report::FrameTable t;
  StackResolver r(nullptr, nullptr, t);
  auto recs = build_records(counts, r, nullptr, /*pid_in_record=*/false);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].pid, -1);
}

}  // namespace
}  // namespace tracekit::report
