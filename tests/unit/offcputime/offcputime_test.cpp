#include "offcputime/offcputime.hpp"

#include <gtest/gtest.h>

namespace tracekit::offcpu {
namespace {

TEST(OffcpuHeaderTest, MatchesBcc) {
  Options o;
  EXPECT_EQ(header(o),
            "Tracing off-CPU time (us) of all threads by user + kernel stack... Hit Ctrl-C to end.");
  o.pid = 185;
  o.duration = 5;
  EXPECT_EQ(header(o), "Tracing off-CPU time (us) of PID 185 by user + kernel stack for 5 secs.");
  Options t;
  t.tid = 188;
  t.kernel_stacks_only = true;
  EXPECT_EQ(header(t), "Tracing off-CPU time (us) of TID 188 by kernel stack... Hit Ctrl-C to end.");
  Options u;
  u.user_threads_only = true;
  u.user_stacks_only = true;
  EXPECT_EQ(header(u), "Tracing off-CPU time (us) of user threads by user stack... Hit Ctrl-C to end.");
  Options k;
  k.kernel_threads_only = true;
  EXPECT_EQ(header(k),
            "Tracing off-CPU time (us) of kernel threads by user + kernel stack... Hit Ctrl-C to "
            "end.");
}

}  // namespace
}  // namespace tracekit::offcpu
