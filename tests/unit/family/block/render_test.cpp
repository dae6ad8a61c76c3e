// iosnoop's lines and iolatency's histogram, against perf-tools' layout.
#include "family/block/render.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "iolatency/iolatency.hpp"

namespace tracekit::output {
namespace {

TEST(IosnoopOutputTest, HeaderAndLineAsPerfTools) {
  std::ostringstream out;
  io_header(out, false, false);
  io_line(out, {6186336190000, 6186336232000, "dd", 9584, "WS", "7,0", 0, 4096}, false, false);
  EXPECT_EQ(out.str(),
            "COMM         PID    TYPE DEV      BLOCK        BYTES     LATms\n"
            "dd           9584   WS   7,0      0            4096       0.04\n");
}

// A comm set with prctl(PR_SET_NAME) may hold a newline or ESC: '?'.
TEST(IosnoopOutputTest, CommControlCharactersEscaped) {
  std::ostringstream out;
  io_line(out, {6186336190000, 6186336232000, "d\nd\x1b[2J", 9584, "WS", "7,0", 0, 4096}, false,
          false);
  EXPECT_EQ(out.str(), "d?d?[2J      9584   WS   7,0      0            4096       0.04\n");
}

TEST(IosnoopOutputTest, StartAndEndTimesAndLongNames) {
  std::ostringstream out;
  io_header(out, true, true);
  io_line(out,
          {5982800302000, 5982806037500, "supervise-longname", 1809, "W", "202,1", 17039600, 4096},
          true, true);
  EXPECT_EQ(out.str(),
            "STARTs          ENDs            COMM         PID    TYPE DEV      BLOCK        BYTES  "
            "   LATms\n"
            "5982.800302     5982.806037     supervise-lo 1809   W    202,1    17039600     4096   "
            "    5.74\n");
}

TEST(IolatencyOutputTest, HistogramRowsUpToTheHighestBucket) {
  std::ostringstream out;
  std::vector<uint64_t> b{1913, 22, 0, 3};
  latency_histogram(out, b);
  EXPECT_EQ(out.str(),
            "  >=(ms) .. <(ms)   : I/O      |Distribution                          |\n"
            "       0 -> 1       : 1913     |######################################|\n"
            "       1 -> 2       : 22       |#                                     |\n"
            "       2 -> 4       : 0        |                                      |\n"
            "       4 -> 8       : 3        |#                                     |\n");
}

TEST(IolatencyOutputTest, EmptyHistogramHasOneRow) {
  std::ostringstream out;
  latency_histogram(out, {});
  EXPECT_EQ(out.str(),
            "  >=(ms) .. <(ms)   : I/O      |Distribution                          |\n"
            "       0 -> 1       : 0        |                                      |\n");
}

TEST(IolatencyOutputTest, BucketsArePerfToolsPowersOfTwo) {
  using iolatency::bucket;
  EXPECT_EQ(bucket(0), 0u);
  EXPECT_EQ(bucket(1000000), 0u);  // 1 ms: "0 -> 1"
  EXPECT_EQ(bucket(1000001), 1u);
  EXPECT_EQ(bucket(2000000), 1u);
  EXPECT_EQ(bucket(2000001), 2u);
  EXPECT_EQ(bucket(1000000000), 10u);  // 1 s: "512 -> 1024"
}

}  // namespace
}  // namespace tracekit::output
