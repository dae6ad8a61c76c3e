#include "report/stack_records.hpp"

#include <gtest/gtest.h>

#include <sstream>

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
  StackResolver r(&k, nullptr);
  // Leaf exact; a return address at the start of do_syscall_64 belongs to the
  // call in entry_SYSCALL_64 before it.
  std::vector<uint64_t> frames{0xffffffff81000310, 0xffffffff81000200};
  auto out = r.kernel(frames);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "__x64_sys_getppid");
  EXPECT_EQ(out[0].offset, 0x10u);
  EXPECT_EQ(out[1].name, "entry_SYSCALL_64");
  EXPECT_EQ(out[1].addr, 0xffffffff81000200u);
}

TEST(ReportStackRecordsTest, UnresolvedFramesHaveNoName) {
  StackResolver r(nullptr, nullptr);
  std::vector<uint64_t> frames{0x1234};
  auto out = r.user(42, frames);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].name.empty());
  EXPECT_EQ(out[0].addr, 0x1234u);
}

TEST(ReportStackRecordsTest, BuildsOneRecordPerKeyWithStates) {
  auto k = fake_kernel();
  StackResolver r(&k, nullptr);
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
  EXPECT_EQ(recs[0].kernel.state, output::StackState::kAbsent);
  EXPECT_EQ(recs[0].user.state, output::StackState::kAbsent);
  EXPECT_EQ(recs[1].comm, "app");
  EXPECT_EQ(recs[1].value, 5u);
  EXPECT_EQ(recs[1].pid, 7);
  EXPECT_EQ(recs[1].kernel.state, output::StackState::kPresent);
  EXPECT_EQ(recs[1].user.state, output::StackState::kMissed);
  EXPECT_EQ(recs[2].comm, "swapper/1");
  EXPECT_EQ(recs[2].user.state, output::StackState::kAbsent);  // empty: no user side
  EXPECT_EQ(missing.stacks, 1u);
}

TEST(ReportStackRecordsTest, PidLeftOutWhenNotKeyed) {
  aggregate::StackCounts counts(4, 4);
  counts.add(7, "app", std::nullopt, std::nullopt, 1);
  StackResolver r(nullptr, nullptr);
  auto recs = build_records(counts, r, nullptr, /*pid_in_record=*/false);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].pid, -1);
}

}  // namespace
}  // namespace tracekit::report
