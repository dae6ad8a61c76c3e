#include "tracefs/event_format.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "tracefs/tracing_dir.hpp"

namespace tracekit::tracefs {
namespace {

// sched_switch as Linux 6.18 describes it (offsets differ across versions:
// the decoder must use the ones given here).
constexpr const char* kSchedSwitch =
    "name: sched_switch\n"
    "ID: 372\n"
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
    "\n"
    "\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
    "\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n"
    "\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n"
    "\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n"
    "\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n"
    "\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n"
    "\n"
    "print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s "
    "next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, "
    "(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
    "0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & "
    "((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | "
    "0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, "
    "\"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { "
    "0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", "
    "REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | "
    "0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
    "REC->next_pid, REC->next_prio\n";

std::vector<uint8_t> record(const char* prev, int32_t prev_pid, int64_t state, int32_t next_pid) {
  std::vector<uint8_t> r(64, 0);
  uint16_t type = 372;
  std::memcpy(r.data(), &type, 2);
  std::strncpy(reinterpret_cast<char*>(r.data() + 8), prev, 16);
  std::memcpy(r.data() + 24, &prev_pid, 4);
  std::memcpy(r.data() + 32, &state, 8);
  std::strncpy(reinterpret_cast<char*>(r.data() + 40), "next", 16);
  std::memcpy(r.data() + 56, &next_pid, 4);
  return r;
}

TEST(TracefsEventFormatTest, FieldsComeFromTheFormatText) {
  auto f = EventFormat::parse(kSchedSwitch, "sched");
  ASSERT_TRUE(f.ok()) << f.error().str();
  EXPECT_EQ(f->id(), 372);
  EXPECT_EQ(f->name(), "sched:sched_switch");
  auto raw = record("bash", 42, 2, 7);
  EXPECT_EQ(f->number(f->field("prev_pid"), raw), 42u);
  EXPECT_EQ(f->number(f->field("prev_state"), raw), 2u);
  EXPECT_EQ(f->number(f->field("next_pid"), raw), 7u);
  EXPECT_EQ(f->string(f->field("prev_comm"), raw), "bash");
  EXPECT_EQ(f->field("no_such_field"), nullptr);
}

TEST(TracefsEventFormatTest, ShortRecordsAreRejected) {
  auto f = EventFormat::parse(kSchedSwitch, "sched");
  ASSERT_TRUE(f.ok());
  auto raw = record("bash", 42, 2, 7);
  raw.resize(30);
  EXPECT_FALSE(f->number(f->field("prev_state"), raw));
  EXPECT_EQ(f->string(f->field("next_comm"), raw), "");
}

TEST(TracefsEventFormatTest, PrintUsesTheKernelsPrintFormat) {
  auto f = EventFormat::parse(kSchedSwitch, "sched");
  ASSERT_TRUE(f.ok());
  auto line = [&](int64_t state) { return f->print(record("bash", 42, state, 7)); };
  EXPECT_NE(line(1).find("prev_state=S "), std::string::npos) << line(1);
  EXPECT_NE(line(2).find("prev_state=D "), std::string::npos) << line(2);
  EXPECT_NE(line(0).find("prev_state=R "), std::string::npos) << line(0);
  EXPECT_NE(line(0x100).find("prev_state=R+ "), std::string::npos) << line(0x100);
  EXPECT_NE(line(0x80).find("prev_state=I "), std::string::npos) << line(0x80);
}

// Found by tests/fuzz/event_format_fuzz.cpp: printing a record shorter than
// the event's fields read past it (and an empty one dereferenced nullptr).
TEST(TracefsEventFormatTest, PrintOfAShortRecordIsEmpty) {
  auto f = EventFormat::parse(kSchedSwitch, "sched");
  ASSERT_TRUE(f.ok());
  for (size_t size : {0, 1, 8, 30, 40, 63}) {
    auto raw = record("bash", 42, 1, 7);
    raw.resize(size);
    EXPECT_EQ(f->print(raw), "") << size << " bytes";
  }
  EXPECT_NE(f->print(record("bash", 42, 1, 7)), "");
}

TEST(TracefsEventFormatTest, GarbageIsAnError) {
  EXPECT_FALSE(EventFormat::parse("not a format", "sched").ok());
}

TEST(TracefsTracingDirTest, FindsTracefsThenDebugfs) {
  EXPECT_EQ(find_in_mounts("proc /proc proc rw 0 0\n"
                           "nodev /sys/kernel/tracing tracefs rw 0 0\n"),
            "/sys/kernel/tracing");
  EXPECT_EQ(find_in_mounts("debugfs /sys/kernel/debug debugfs rw 0 0\n"),
            "/sys/kernel/debug/tracing");
  EXPECT_EQ(find_in_mounts("debugfs /sys/kernel/debug debugfs rw 0 0\n"
                           "tracefs /mnt/t tracefs rw 0 0\n"),
            "/mnt/t");
  EXPECT_EQ(find_in_mounts("proc /proc proc rw 0 0\n"), "");
  // tracefs turned off (TRACEKIT_KERNEL_FEATURES=-tracefs): debugfs only.
  EXPECT_EQ(find_in_mounts("debugfs /sys/kernel/debug debugfs rw 0 0\n"
                           "tracefs /mnt/t tracefs rw 0 0\n",
                           false),
            "/sys/kernel/debug/tracing");
  EXPECT_EQ(find_in_mounts("tracefs /mnt/t tracefs rw 0 0\n", false), "");
}

}  // namespace
}  // namespace tracekit::tracefs
