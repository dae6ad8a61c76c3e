#include "output/snoop.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace tracekit::output {
namespace {

TEST(OutputSnoopTest, SeedFormat) {
  std::vector<report::Frame> frames{{0xffffffff81280461, "ext4_sync_fs", 0x11},
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
  std::vector<report::Frame> none;
  SnoopEvent e{1000000000ull, "a_very_long_command", 1, 0, &none};
  std::ostringstream out;
  snoop_event(out, e, true, false);
  EXPECT_EQ(out.str(), "1.000000000        a_very_long_ 1      0   \n");
}

// perf-tools' opensnoop columns: COMM cut at 16, the descriptor in hex as the
// kernel's "sys_openat -> 0x3" shows it, -1 for any failure.
TEST(OutputSnoopTest, OpenRows) {
  std::ostringstream out;
  open_header(out, false);
  open_event(out, {0, "cat", 25640, 3, "/etc/ld.so.cache"}, false);
  open_event(out, {0, "a_very_long_command_name", 7, -2, "/nope"}, false);
  EXPECT_EQ(out.str(),
            "COMM             PID      FD FILE\n"
            "cat              25640   0x3 /etc/ld.so.cache\n"
            "a_very_long_comm 7        -1 /nope\n");
  std::ostringstream timed;
  open_header(timed, true);
  open_event(timed, {4345768332626999ull, "cat", 1, 12, "f"}, true);
  EXPECT_EQ(timed.str(),
            "TIMEs            COMM             PID      FD FILE\n"
            "4345768.332626   cat              1       0xc f\n");
  std::ostringstream wide;
  open_event(wide, {0, "x", 1, 1024, "f"}, false);
  EXPECT_EQ(wide.str(), "x                1      0x400 f\n");
}

// A newline in a file name would forge a line (a fake open of /etc/shadow),
// ESC would reach the terminal: both print as '?', in the comm too. UTF-8
// names print as they are.
TEST(OutputSnoopTest, OpenRowsEscapeControlCharacters) {
  std::ostringstream out;
  open_event(out, {0, "e\x1b[2Jvil", 5, 3, "x\ncat              1     0x3 /etc/shadow"}, false);
  open_event(out, {0, "caf\xc3\xa9", 6, 3, "/tmp/\xe2\x9c\x93\x1b]0;t\x07"}, false);
  EXPECT_EQ(out.str(),
            "e?[2Jvil         5       0x3 x?cat              1     0x3 /etc/shadow\n"
            "caf\xc3\xa9            6       0x3 /tmp/\xe2\x9c\x93?]0;t?\n");
}

// stacksnoop -v: the comm column is anyone's.
TEST(OutputSnoopTest, VerboseCommEscaped) {
  std::vector<report::Frame> none;
  std::ostringstream out;
  snoop_event(out, {1000000000ull, "a\nb\x1b", 1, 0, &none}, true, false);
  EXPECT_EQ(out.str(), "1.000000000        a?b?         1      0   \n");
}

}  // namespace
}  // namespace tracekit::output
