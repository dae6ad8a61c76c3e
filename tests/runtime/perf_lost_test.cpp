// PerCpuEvents::lost() with an event the caller opened into a ring itself
// (offcputime's switch-record dummies): records such an event could not
// write count once its own count is handed to lost(), even when the ring
// never got to report them (PERF_RECORD_LOST is written only at a ring's
// next successful write).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "harness.hpp"
#include "kernel/features.hpp"
#include "perf/event.hpp"
#include "perf/per_cpu.hpp"
#include "util/fd.hpp"

namespace tracekit::testing {
namespace {

TEST(PerfLostRuntime, RecordsLostByTheCallersOwnEventCount) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on a CPU";
  if (!kernel::Features::host().has(kernel::Feature::kLostSamples))
    GTEST_SKIP() << "needs the kernel's own lost counts: "
                 << kernel::Features::host().missing(kernel::Feature::kLostSamples).message;
  if (!kernel::Features::host().has(kernel::Feature::kContextSwitch))
    GTEST_SKIP() << "needs switch records: "
                 << kernel::Features::host().missing(kernel::Feature::kContextSwitch).message;
  cpu_set_t old;
  ASSERT_EQ(sched_getaffinity(0, sizeof old, &old), 0);
  const int cpu = sched_getcpu();
  ASSERT_GE(cpu, 0);

  // The ring's owner writes nothing: a dummy event, one data page.
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_DUMMY;
  attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
  attr.sample_id_all = 1;
  attr.disabled = 1;
  auto events = perf::PerCpuEvents::open(attr, {cpu}, -1, 1);
  ASSERT_TRUE(events) << events.error().str();

  // The caller's own event, writing switch records into that ring.
  perf_event_attr sb = events->counting_lost(attr);
  sb.disabled = 0;
  sb.context_switch = 1;
  auto fd = perf::open_event(sb, -1, cpu);
  ASSERT_TRUE(fd) << fd.error().str();
  ASSERT_EQ(ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, events->ring_fd(0)), 0);

  // Hundreds of switches on that CPU, none read: the page fills and the
  // rest is lost.
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  for (int i = 0; i < 400; ++i) {
    const timespec ts{0, 10000};
    nanosleep(&ts, nullptr);
  }
  sched_setaffinity(0, sizeof old, &old);

  const uint64_t own = events->own_lost(fd->get());
  *fd = Fd();
  EXPECT_GT(own, 0u) << "400 sleeps wrote no more than one page of switch records";
  events->drain([](int, const perf_event_header&, std::span<const uint8_t>) {});
  EXPECT_EQ(events->lost(), 0u) << "nothing the ring's owner wrote was lost";
  EXPECT_EQ(events->lost(own), own);
}

}  // namespace
}  // namespace tracekit::testing
