#include "output/snoop.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tracekit::output {
namespace {

TEST(OutputSnoopTest, SeedFormat) {
  std::vector<Frame> frames{{0xffffffff81280461, "ext4_sync_fs", 0x11},
                            {0xffffffff811ed7f9, "iterate_supers", 0x49},
                            {0xffffffff8121ba25, "", 0}};
  SnoopEvent e{42005194132250004ull, "sync", 22352, 1, &frames};
  std::ostringstream plain;
  snoop_header(plain, false);
  snoop_event(plain, e, false, false);
  EXPECT_EQ(plain.str(),
            "TIME(s)            STACK\n"
            "42005194.132250004 \n"
            "42005194.132250004 ip: ffffffff81280461 ext4_sync_fs\n"
            "42005194.132250004 r0: ffffffff811ed7f9 iterate_supers\n"
            "42005194.132250004 r1: ffffffff8121ba25 [unknown]\n");
  std::ostringstream verbose;
  snoop_header(verbose, true);
  snoop_event(verbose, e, true, true);
  EXPECT_EQ(verbose.str(),
            "TIME(s)            COMM         PID    CPU STACK\n"
            "42005194.132250004 sync         22352  1   \n"
            "42005194.132250004 sync         22352  1   ip: ffffffff81280461 ext4_sync_fs+0x11\n"
            "42005194.132250004 sync         22352  1   r0: ffffffff811ed7f9 iterate_supers+0x49\n"
            "42005194.132250004 sync         22352  1   r1: ffffffff8121ba25 [unknown]\n");
}

TEST(OutputSnoopTest, LongCommIsCutAtTwelve) {
  std::vector<Frame> none;
  SnoopEvent e{1000000000ull, "a_very_long_command", 1, 0, &none};
  std::ostringstream out;
  snoop_event(out, e, true, false);
  EXPECT_EQ(out.str(), "1.000000000        a_very_long_ 1      0   \n");
}

}  // namespace
}  // namespace tracekit::output
