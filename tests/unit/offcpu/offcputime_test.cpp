#include "offcpu/offcputime.hpp"

#include <gtest/gtest.h>

namespace tracekit::offcpu {
namespace {

TEST(OffcpuStateBitsTest, KernelLettersToBccStateBits) {
  const std::pair<const char*, std::optional<uint64_t>> cases[] = {
      {"R", 0},       {"R+", 0},     {"S", 1},         {"D", 2},
      {"T", 4},       {"t", 8},      {"X", 16},        {"Z", 32},
      {"P", 64},      {"I", 1026},   {"S|D", 3},       {"D|K", 258},
      {"", std::nullopt}, {"Q", std::nullopt},
  };
  for (auto& [letters, bits] : cases) EXPECT_EQ(state_bits(letters), bits) << letters;
}

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
