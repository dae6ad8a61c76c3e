#include "perf/stack_sampler.hpp"

#include <gtest/gtest.h>

namespace tracekit::perf {
namespace {

// 8 MiB rings while all of them fit in 32 MiB, 1 MiB from 32 CPUs on.
TEST(StackSamplerTest, RingsShrinkAsCpusAreAdded) {
  EXPECT_EQ(ring_pages(0), 2048u);
  EXPECT_EQ(ring_pages(1), 2048u);
  EXPECT_EQ(ring_pages(2), 2048u);
  EXPECT_EQ(ring_pages(4), 2048u);
  EXPECT_EQ(ring_pages(5), 1024u);
  EXPECT_EQ(ring_pages(8), 1024u);
  EXPECT_EQ(ring_pages(9), 512u);
  EXPECT_EQ(ring_pages(16), 512u);
  EXPECT_EQ(ring_pages(24), 256u);
  EXPECT_EQ(ring_pages(32), 256u);
  EXPECT_EQ(ring_pages(512), 256u);
}

// A known rate: a second of it, from 512 KiB up to the rings above.
TEST(StackSamplerTest, RingsOfAKnownRateHoldASecond) {
  EXPECT_EQ(ring_pages(2, 49 * 1080), 128u);       // profile at 49 Hz: 512 KiB
  EXPECT_EQ(ring_pages(2, 999 * 1080), 512u);      // -F 999: 1 MB a second, 2 MiB
  EXPECT_EQ(ring_pages(2, 999 * 9432), 2048u);     // dwarf at -F 999: 8 MiB
  EXPECT_EQ(ring_pages(16, 999 * 9432), 512u);     // ... within the 32 MiB
  EXPECT_EQ(ring_pages(2, 4096 * 200), 256u);      // 200 pages: rounded up to 256
}

TEST(StackSamplerTest, LargestSample) {
  perf_event_attr a{};
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                  PERF_SAMPLE_CALLCHAIN;
  a.sample_max_stack = 127;
  EXPECT_EQ(max_sample_bytes(a), 8u + 4 * 8 + 8 * (1 + 127 + 2));
  a.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
  a.sample_regs_user = kUnwindRegsMask;
  a.sample_stack_user = 8192;
  EXPECT_EQ(max_sample_bytes(a), 8u + 4 * 8 + 8 * (1 + 127 + 2) + 8 * 18 + 16 + 8192);
}

TEST(StackSamplerTest, ReaderWakesAtAQuarterOfTheRing) {
  perf_event_attr a{};
  wake_at_quarter(a, 2048);
  EXPECT_EQ(a.watermark, 1u);
  EXPECT_EQ(a.wakeup_watermark, 2048u * 4096 / 4);
}

TEST(StackSamplerTest, LostEventsWording) {
  EXPECT_EQ(lost_events_warning(7), "WARNING: 7 events lost: the kernel buffer was full.\n");
  EXPECT_EQ(lost_events_warning(1, "try a lower -F"),
            "WARNING: 1 events lost: the kernel buffer was full (try a lower -F).\n");
}

TEST(StackSamplerTest, StacksAskedOfTheKernel) {
  perf_event_attr fp{};
  ASSERT_TRUE(request_stacks(fp, true, true, CallGraph{}).ok());
  EXPECT_TRUE(fp.sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_FALSE(fp.sample_type & (PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER));

  perf_event_attr kernel_only{};
  ASSERT_TRUE(request_stacks(kernel_only, true, false, CallGraph{.mode = CallGraph::Mode::kDwarf})
                  .ok());
  EXPECT_FALSE(kernel_only.sample_type & PERF_SAMPLE_STACK_USER)
      << "no user side: nothing to unwind";

  perf_event_attr dwarf{};
  auto st = request_stacks(dwarf, true, true, CallGraph{.mode = CallGraph::Mode::kDwarf});
  if (!st.ok()) GTEST_SKIP() << st.error().str();
  EXPECT_TRUE(dwarf.sample_type & PERF_SAMPLE_CALLCHAIN);
  EXPECT_TRUE(dwarf.sample_type & PERF_SAMPLE_REGS_USER);
  EXPECT_TRUE(dwarf.sample_type & PERF_SAMPLE_STACK_USER);
  EXPECT_EQ(dwarf.sample_stack_user, 8192u);
}

TEST(StackSamplerTest, PrepareAsksTheProcessRecords) {
  perf_event_attr a{};
  SamplerOptions o;
  o.user = false;
  ASSERT_TRUE(StackSampler::prepare(a, o, 2).ok());
  EXPECT_TRUE(a.comm);
  EXPECT_TRUE(a.task);
  EXPECT_TRUE(a.mmap);
  EXPECT_TRUE(a.sample_id_all);
  EXPECT_TRUE(a.sample_type & PERF_SAMPLE_TIME);
  EXPECT_EQ(a.wakeup_watermark, ring_pages(2) * 4096 / 4);
}

}  // namespace
}  // namespace tracekit::perf
