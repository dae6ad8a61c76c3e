// profile's rate bound: -c is held to the kernel's sample rate limit as -F
// is, and the messages name the option the user gave.
#include <gtest/gtest.h>

#include "perf/stack_sampler.hpp"
#include "profile/profiler.hpp"

namespace tracekit::profile {
namespace {

Options with_count(uint64_t count) {
  Options o;
  o.count = count;
  return o;
}

Options with_frequency(int hz) {
  Options o;
  o.frequency = hz;
  return o;
}

struct RateCase {
  Options o;
  long max_rate;
  const char* error;  // "" when allowed
};

TEST(ProfileRateTest, CountAndFrequencyHeldToTheKernelLimit) {
  const RateCase cases[] = {
      {Options{}, 100000, ""},
      {with_frequency(100000), 100000, ""},
      {with_frequency(100001), 100000,
       "frequency 100001 Hertz is above this kernel's limit of 100000 (lower -F, or raise "
       "kernel.perf_event_max_sample_rate with sysctl)"},
      {with_count(10000), 100000, ""},  // 1e9 / 10000 = 100000 per second
      {with_count(1000000), 100000, ""},
      {with_count(9999), 100000,
       "count 9999 (a sample every 9999 ns of CPU time) is above this kernel's limit of 100000 "
       "samples per second (use -c 10000 or more, or raise kernel.perf_event_max_sample_rate "
       "with sysctl)"},
      {with_count(1), 100000,
       "count 1 (a sample every 1 ns of CPU time) is above this kernel's limit of 100000 samples "
       "per second (use -c 10000 or more, or raise kernel.perf_event_max_sample_rate with "
       "sysctl)"},
      {with_count(1), 3000,  // not a divisor of 1e9: rounded up
       "count 1 (a sample every 1 ns of CPU time) is above this kernel's limit of 3000 samples "
       "per second (use -c 333334 or more, or raise kernel.perf_event_max_sample_rate with "
       "sysctl)"},
      {with_count(333334), 3000, ""},
      {with_count(1), 0, ""},  // no limit known
  };
  for (const auto& c : cases) {
    auto st = check_rate(c.o, c.max_rate);
    if (*c.error == '\0') {
      EXPECT_TRUE(st.ok()) << st.error().str();
    } else {
      ASSERT_FALSE(st.ok()) << c.error;
      EXPECT_EQ(st.error().str(), c.error);
    }
  }
}

TEST(ProfileRateTest, LostWarningNamesTheOptionUsed) {
  EXPECT_EQ(perf::lost_events_warning(12, lost_hint(Options{})),
            "WARNING: 12 events lost: the kernel buffer was full (try a lower -F).\n");
  EXPECT_EQ(perf::lost_events_warning(3, lost_hint(with_frequency(999))),
            "WARNING: 3 events lost: the kernel buffer was full (try a lower -F).\n");
  EXPECT_EQ(perf::lost_events_warning(119000, lost_hint(with_count(10000))),
            "WARNING: 119000 events lost: the kernel buffer was full (try a higher -c).\n");
}

}  // namespace
}  // namespace tracekit::profile
