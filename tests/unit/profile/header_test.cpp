#include <gtest/gtest.h>

#include "profile/profiler.hpp"

namespace tracekit::profile {
namespace {

struct HeaderCase {
  Options o;
  const char* expected;
};

Options with(auto&& f) {
  Options o;
  f(o);
  return o;
}

TEST(ProfileHeaderTest, MatchesBcc) {
  const HeaderCase cases[] = {
      {Options{}, "Sampling at 49 Hertz of all threads by user + kernel stack... Hit Ctrl-C to end."},
      {with([](Options& o) {
         o.frequency = 99;
         o.duration = 5;
       }),
       "Sampling at 99 Hertz of all threads by user + kernel stack for 5 secs."},
      {with([](Options& o) { o.pids = {185}; }),
       "Sampling at 49 Hertz of PID 185 by user + kernel stack... Hit Ctrl-C to end."},
      {with([](Options& o) { o.pids = {2040, 1316151}; }),
       "Sampling at 49 Hertz of PID [2040, 1316151] by user + kernel stack... Hit Ctrl-C to end."},
      {with([](Options& o) {
         o.tids = {7};
         o.user_only = true;
       }),
       "Sampling at 49 Hertz of TID 7 by user stack... Hit Ctrl-C to end."},
      {with([](Options& o) {
         o.kernel_only = true;
         o.cpu = 7;
         o.duration = 2;
       }),
       "Sampling at 49 Hertz of all threads by kernel stack on CPU#7 for 2 secs."},
      {with([](Options& o) { o.count = 1000000; }),
       "Sampling at every 1000000 events of all threads by user + kernel stack... Hit Ctrl-C to "
       "end."},
  };
  for (const auto& c : cases) EXPECT_EQ(header(c.o), c.expected);
}

}  // namespace
}  // namespace tracekit::profile
