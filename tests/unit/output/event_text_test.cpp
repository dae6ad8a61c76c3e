// The kernel's trace-file layout: context column, latency flags, timestamps
// rounded as the kernel rounds them, stacks.
#include "output/event_text.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <sstream>

#include <unistd.h>

#include "../fixtures.hpp"
#include "ftrace/decode.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/user.hpp"
#include "util/strings.hpp"

// A function of this test's own process for a user stack to resolve to.
extern "C" __attribute__((noinline, used)) int event_text_user_frame(int x) { return 3 * x + 1; }

namespace tracekit::output {
namespace {

TEST(EventTextTest, ContextMatchesTheKernelsLayout) {
  std::string out = "before ";
  print_context(out, "cat", 4242, 1, "d..2.", 512123456789ull);
  EXPECT_EQ(out, "before              cat-4242    [001] d..2.   512.123457: ");
  std::string wide;
  print_context(wide, "a-very-long-comm-name", 12345678, 123, "....", 1234567890123456789ull);
  EXPECT_EQ(wide, "a-very-long-comm-name-12345678 [123] .... 1234567890.123457: ");
}

TEST(EventTextTest, TimestampsRoundToTheMicrosecond) {
  auto at = [](uint64_t ns) {
    std::string s;
    print_context(s, "x", 1, 0, ".....", ns);
    return s.substr(s.rfind(' ', s.size() - 3) + 1);
  };
  EXPECT_EQ(at(0), "0.000000: ");
  EXPECT_EQ(at(499), "0.000000: ");
  EXPECT_EQ(at(500), "0.000001: ");
  EXPECT_EQ(at(999999999500ull), "1000.000000: ");
}

TEST(EventTextTest, LatencyFlags) {
  EXPECT_EQ(latency_flags({0x00, 0x00}, true), ".....");
  EXPECT_EQ(latency_flags({0x00, 0x00}, false), "....");
  EXPECT_EQ(latency_flags({0x01, 0x02}, true), "d..2.");
  EXPECT_EQ(latency_flags({0x81, 0x00}, true), "D....");
  EXPECT_EQ(latency_flags({0x80, 0x00}, true), "b....");
  EXPECT_EQ(latency_flags({0x24, 0x00}, true), ".N...");
  EXPECT_EQ(latency_flags({0x04, 0x00}, true), ".n...");
  EXPECT_EQ(latency_flags({0x20, 0x00}, true), ".p...");
  EXPECT_EQ(latency_flags({0x08, 0x00}, true), "..h..");
  EXPECT_EQ(latency_flags({0x10, 0x00}, true), "..s..");
  EXPECT_EQ(latency_flags({0x18, 0x00}, true), "..H..");
  EXPECT_EQ(latency_flags({0x48, 0x00}, true), "..Z..");
  EXPECT_EQ(latency_flags({0x40, 0x00}, true), "..z..");
  EXPECT_EQ(latency_flags({0x01, 0x1f}, true), "d..f1");
  EXPECT_EQ(latency_flags({0x01, 0x1f}, false), "d..f");
}

TEST(EventTextTest, CommonFieldsNeedTheWholeHeader) {
  const uint8_t rec[] = {0x10, 0x00, 0x01, 0x02, 0x39, 0x05, 0x00, 0x00};
  auto c = common_fields(rec);
  EXPECT_EQ(c.flags, 0x01);
  EXPECT_EQ(c.preempt_count, 0x02);
  auto none = common_fields(std::span<const uint8_t>(rec, 3));
  EXPECT_EQ(none.flags, 0);
  EXPECT_EQ(none.preempt_count, 0);
}

TEST(EventTextTest, KprobeAddressesAreSymbolizedAsTheKernelDoes) {
  std::istringstream kallsyms(
      "ffffffff81200000 T vfs_read\n"
      "ffffffff812001a0 T vfs_write\n"
      "ffffffff81300000 T ksys_read\n"
      "ffffffff813000f0 T ksys_write\n"
      "ffffffffc0100000 t ext4_sync_fs\t[ext4]\n"
      "ffffffffc0100200 t ext4_other\t[ext4]\n");
  auto k = symbols::KernelSymbols::parse(kallsyms);
  EXPECT_EQ(symbolize_probe_ip("p_vfs_read: (ffffffff81200000) count=1", k),
            "p_vfs_read: (vfs_read+0x0/0x1a0) count=1");
  // The print fmt's "(func <- ret_ip)" becomes the kernel's "(ret_ip <- func)".
  EXPECT_EQ(symbolize_probe_ip("r_vfs_read: (ffffffff81200000 <- ffffffff8130006b) arg1=0x1", k),
            "r_vfs_read: (ksys_read+0x6b/0xf0 <- vfs_read) arg1=0x1");
  EXPECT_EQ(symbolize_probe_ip("m: (ffffffffc0100010)", k), "m: (ext4_sync_fs+0x10/0x200 [ext4])");
  // Other text stays as it is.
  for (const char* t : {"readline: (0x55d4a7fcc4a0) arg1=3", "x: (zz)", "x: no parenthesis",
                        "x: (ffffffff81200000", "x: (ffffffff81200000 <- zz)"})
    EXPECT_EQ(symbolize_probe_ip(t, k), t);
}

TEST(EventTextTest, UprobeAddressesAsTheKernelPrintsThem) {
  EXPECT_EQ(user_probe_ip("wu: (55836c90a265) i=0"), "wu: (0x55836c90a265) i=0");
  EXPECT_EQ(user_probe_ip("wu: (5639eadcc265 <- 5639eadcc2e6) ret=4"),
            "wu: (0x5639eadcc2e6 <- 0x5639eadcc265) ret=4");
  EXPECT_EQ(user_probe_ip("wu: (0x55836c90a265) i=0"), "wu: (0x55836c90a265) i=0");
}

// A string field (a file name), the comm and a user frame's symbol may hold
// a newline or ESC: each control character prints as '?', so that one event
// is one line and nothing reaches the terminal as an escape sequence.
// Ordinary text prints exactly as the kernel's trace file shows it.
TEST(EventTextTest, ControlCharactersInStringsAndCommsPrintAsQuestionMarks) {
  const std::string exec_format =
      "name: sched_process_exec\n"
      "ID: 365\n"
      "format:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
      "\n"
      "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
      "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
      "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n"
      "\n"
      "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
      "REC->old_pid\n";
  auto tep = ftrace::tep_from_formats(testing::fixture("ftrace/header_page"),
                                      {{"sched", exec_format}});
  ASSERT_TRUE(tep.ok());
  auto record = [](std::string_view file) {
    std::vector<uint8_t> rec(20, 0);
    const uint16_t type = 365;
    const int32_t pid = 42, old_pid = 42;
    const uint32_t loc = static_cast<uint32_t>(file.size() + 1) << 16 | 20;
    std::memcpy(rec.data(), &type, 2);
    std::memcpy(rec.data() + 4, &pid, 4);
    std::memcpy(rec.data() + 8, &loc, 4);
    std::memcpy(rec.data() + 12, &pid, 4);
    std::memcpy(rec.data() + 16, &old_pid, 4);
    rec.insert(rec.end(), file.begin(), file.end());
    rec.push_back(0);
    return rec;
  };
  auto line = [&](std::string comm, std::string_view file) {
    std::vector<uint8_t> rec = record(file);
    ftrace::Event e;
    e.cpu = 1;
    e.ts = 512123456789ull;
    e.pid = 42;
    e.type = 365;
    e.data = rec;
    EventText text(tep->get(), [comm](int) { return comm; }, nullptr, true);
    std::string out;
    text.print(out, e);
    return out;
  };
  EXPECT_EQ(line("sh", "/bin/true"),
            "              sh-42      [001] .....   512.123457: sched_process_exec: "
            "filename=/bin/true pid=42 old_pid=42\n");
  EXPECT_EQ(line("e\x1b[2J\n", "/tmp/x\n          sshd-1       [000] .....   1.000000: \x1b]0;"),
            "          e?[2J?-42      [001] .....   512.123457: sched_process_exec: "
            "filename=/tmp/x?          sshd-1       [000] .....   1.000000: ?]0; pid=42 "
            "old_pid=42\n");
  // UTF-8 as it is; a C1 control (CSI, U+009B) as '?'.
  EXPECT_EQ(line("caf\xc3\xa9", "/tmp/\xe2\x9c\x93\xc2\x9b" "2J"),
            "           caf\xc3\xa9-42      [001] .....   512.123457: sched_process_exec: "
            "filename=/tmp/\xe2\x9c\x93?2J pid=42 old_pid=42\n");
}

// A user stack entry as the kernel lays out its userstacktrace entry, frames
// resolved in this process; unresolved ones as the kernel prints them.
TEST(EventTextTest, UserStackEntry) {
  auto tep = ftrace::tep_from_formats(
      testing::fixture("ftrace/header_page"),
      {{"ftrace", testing::fixture("ftrace/user_stack.format")},
       {"syscalls", testing::fixture("ftrace/sys_enter_getppid.format")}});
  ASSERT_TRUE(tep.ok());
  std::vector<uint8_t> rec(16, 0), urec(80, 0);
  const uint16_t type = 305;  // sys_enter_getppid.format's ID
  const int32_t pid = 42;
  std::memcpy(rec.data(), &type, 2);
  std::memcpy(rec.data() + 4, &pid, 4);
  urec[2] = 0x01;  // irqs off, on the user_stack record only
  std::vector<uint64_t> frames = {reinterpret_cast<uint64_t>(&event_text_user_frame), 0x1};
  ftrace::Event e;
  e.cpu = 1;
  e.ts = 512123456789ull;
  e.pid = pid;
  e.type = type;
  e.data = rec;
  e.has_user_stack = true;
  e.user_stack = frames;
  e.user_tgid = getpid();
  e.user_stack_record = urec;
  e.user_stack_ts = 512123457789ull;
  symbols::UserSymbols usyms;
  EventText text(tep->get(), [](int) { return std::string("calls"); }, nullptr, true,
                 EventText::ProbeAddresses::kAsFormatted, &usyms);
  std::string out;
  text.print(out, e);
  char addr[32];
  std::snprintf(addr, sizeof addr, "%016llx", static_cast<unsigned long long>(frames[0]));
  EXPECT_EQ(out,
            "           calls-42      [001] .....   512.123457: sys_getppid()\n"
            "           calls-42      [001] d....   512.123458: <user stack trace>\n"
            " => event_text_user_frame <" + std::string(addr) + ">\n"
            " =>  <0000000000000001>\n");

  EventText bare(tep->get(), [](int) { return std::string("calls"); }, nullptr, true);
  std::string plain;
  bare.print(plain, e);
  EXPECT_NE(plain.find(" =>  <" + std::string(addr) + ">\n"), std::string::npos) << plain;
}

// The pid column as the kernel's header has it: "%-5d" on 4.4.121
// ("TASK-PID   CPU#"), "%-7d" on later kernels ("TASK-PID     CPU#").
TEST(EventTextTest, PidWidthFromTheHeader) {
  EXPECT_EQ(pid_width_of_header("#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION\n"), 5);
  EXPECT_EQ(pid_width_of_header("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n"), 7);
  EXPECT_EQ(pid_width_of_header(""), 7);
  std::string out;
  print_context(out, "reads", 742, 0, "d...", 17720068000ull, 5);
  EXPECT_EQ(out, "           reads-742   [000] d...    17.720068: ");
}

}  // namespace
}  // namespace tracekit::output
