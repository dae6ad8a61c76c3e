#include "offcputime/task_state.hpp"

#include <gtest/gtest.h>
#include <traceevent/event-parse.h>

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../fixtures.hpp"

namespace tracekit::offcpu {
namespace {

// The canonical states (state_bits), as TaskState values.
constexpr TaskState kR{0, false, false};
constexpr TaskState kRPreempted{0, false, true};
constexpr TaskState kS{1, false, false};
constexpr TaskState kD{2, false, false};
constexpr TaskState kT{4, false, false};
constexpr TaskState kTraced{8, false, false};
constexpr TaskState kX{16, true, false};
constexpr TaskState kZ{32, true, false};
constexpr TaskState kP{64, false, false};
constexpr TaskState kDeadTask{128, true, false};  // "x", TASK_DEAD
constexpr TaskState kI{1026, false, false};       // "I", or TASK_IDLE as "D|N"

struct Case {
  int64_t raw;  // prev_state as the kernel stores it
  TaskState want;
};

std::string text_of(const TaskState& s) {
  return "{bits " + std::to_string(s.bits) + (s.dead ? ", dead" : "") +
         (s.preempted ? ", preempted" : "") + "}";
}

// A sched_switch record of the format: its event id as common_type, a
// sleeper switching to swapper, prev_state where the format puts it.
std::vector<uint8_t> record(const tracefs::EventFormat& f, int64_t state) {
  std::vector<uint8_t> r(64, 0);
  auto type = static_cast<uint16_t>(f.id());
  std::memcpy(r.data(), &type, 2);
  auto put_comm = [&](const char* field, const char* comm) {
    std::strncpy(reinterpret_cast<char*>(r.data() + f.field(field)->offset), comm, 16);
  };
  put_comm("prev_comm", "sleeper");
  put_comm("next_comm", "swapper/0");
  int32_t pid = 4242;
  std::memcpy(r.data() + f.field("prev_pid")->offset, &pid, 4);
  const tep_format_field* s = f.field("prev_state");
  EXPECT_EQ(s->size, 8);
  std::memcpy(r.data() + s->offset, &state, 8);
  return r;
}

tracefs::EventFormat load(const std::string& era) {
  auto f = tracefs::EventFormat::parse(testing::fixture("sched_switch/" + era + ".format"),
                                       "sched");
  EXPECT_TRUE(f.ok()) << era << ": " << (f.ok() ? "" : f.error().str());
  return std::move(*f);
}

void check_era(const std::string& era, bool index_encoded, const std::vector<Case>& cases) {
  auto f = load(era);
  TaskStates states(f);
  for (const auto& c : cases) {
    auto raw = record(f, c.raw);
    auto got = states.decode(static_cast<uint64_t>(c.raw), raw);
    EXPECT_EQ(got, c.want) << era << " prev_state=" << c.raw << " (0x" << std::hex << c.raw
                           << std::dec << "): got " << text_of(got) << ", want "
                           << text_of(c.want) << "; printed: " << f.print(raw);
  }
  EXPECT_EQ(states.index_encoded(), index_encoded) << era;
}

TEST(OffcpuStateBitsTest, KernelLettersToBccStateBits) {
  const std::pair<const char*, std::optional<uint64_t>> cases[] = {
      {"R", 0},       {"R+", 0},     {"S", 1},         {"D", 2},
      {"T", 4},       {"t", 8},      {"X", 16},        {"Z", 32},
      {"P", 64},      {"I", 1026},   {"S|D", 3},       {"D|K", 258},
      {"", std::nullopt}, {"Q", std::nullopt},
  };
  for (auto& [letters, bits] : cases) EXPECT_EQ(state_bits(letters), bits) << letters;
}

// 3.10 (3.9 to 4.1): task->state bits with Z 16 and X 32 (the other way round
// from 4.14 on), x (TASK_DEAD) 64, K 128, W 256, P 512, and TASK_STATE_MAX
// 1024 as the preemption bit. Flags combine: TASK_KILLABLE is D|K.
TEST(OffcpuTaskStateTest, Linux3_10) {
  check_era("3.10", false,
            {{0, kR},
             {1, kS},
             {2, kD},
             {4, kT},
             {8, kTraced},
             {16, kZ},
             {32, kX},
             {64, kDeadTask},
             {512, kP},
             {2 | 128, {2 | 256, false, false}},  // D|K
             {1 | 256, {1 | 512, false, false}},  // S|W
             {1024, kRPreempted}});
}

// 4.4 (4.2 to 4.10): N (TASK_NOLOAD) 1024, so TASK_IDLE prints "D|N", and
// TASK_STATE_MAX 2048.
TEST(OffcpuTaskStateTest, Linux4_4) {
  check_era("4.4", false,
            {{0, kR},
             {1, kS},
             {2, kD},
             {4, kT},
             {16, kZ},
             {32, kX},
             {64, kDeadTask},
             {1024 | 2, kI},  // TASK_IDLE: the same bits as a later "I"
             {2 | 128, {2 | 256, false, false}},
             {2048, kRPreempted}});
}

// 4.13 (4.11 to 4.13): TASK_NEW 2048 has no letter (printed "0x800"), and
// TASK_STATE_MAX is 4096.
TEST(OffcpuTaskStateTest, Linux4_13) {
  check_era("4.13", false,
            {{0, kR},
             {1, kS},
             {2, kD},
             {16, kZ},
             {32, kX},
             {64, kDeadTask},
             {1024 | 2, kI},
             {2048, {2048, false, false}},  // no letter: the raw value
             {4096, kRPreempted}});
}

// 4.14: the format applies report bits but prev_state holds an index; the
// preemption bit is TASK_STATE_MAX (0x1000). Unfixed, 3 would read "S|D" and
// a dying task (5) "S|T", alive.
TEST(OffcpuTaskStateTest, Linux4_14StoresAnIndex) {
  check_era("4.14", true,
            {{0, kR},
             {1, kS},
             {2, kD},
             {3, kT},
             {4, kTraced},
             {5, kX},
             {6, kZ},
             {7, kP},
             {8, kI},
             {0x1000, kRPreempted}});
}

// 4.15 to 4.18: report bits (S 1 ... X 0x10, Z 0x20, P 0x40, I 0x80) and
// TASK_REPORT_MAX (0x100) for preemption. One state at a time.
TEST(OffcpuTaskStateTest, Linux4_15) {
  check_era("4.15", false,
            {{0, kR},
             {0x01, kS},
             {0x02, kD},
             {0x04, kT},
             {0x08, kTraced},
             {0x10, kX},
             {0x20, kZ},
             {0x40, kP},
             {0x80, kI},
             {0x100, kRPreempted},
             {0x1000, kR}});  // 4.14's preemption bit means nothing here
}

// 4.19 to 5.13: the same numbers, the flags written { 0x0001, "S" }.
TEST(OffcpuTaskStateTest, Linux5_10) {
  check_era("5.10", false,
            {{0, kR}, {0x01, kS}, {0x02, kD}, {0x04, kT}, {0x10, kX}, {0x20, kZ},
             {0x80, kI}, {0x100, kRPreempted}});
}

// 5.14 on (this machine's 6.18): eight-digit constants, same numbers.
TEST(OffcpuTaskStateTest, Linux6_18) {
  check_era("6.18", false,
            {{0, kR}, {0x01, kS}, {0x02, kD}, {0x04, kT}, {0x08, kTraced}, {0x10, kX},
             {0x20, kZ}, {0x40, kP}, {0x80, kI}, {0x100, kRPreempted}});
}

TEST(OffcpuTaskStateTest, ValuesAreCachedButShortRecordsAreNot) {
  auto f = load("6.18");
  TaskStates states(f);
  auto raw = record(f, 2);
  std::vector<uint8_t> cut(raw.begin(), raw.begin() + 30);
  // Too short to print: unknown (the raw value), and not remembered.
  EXPECT_EQ(states.decode(2, cut), (TaskState{2, false, false}));
  EXPECT_EQ(states.decode(2, raw), kD);
  // Remembered: a later record of the same value is not printed again.
  EXPECT_EQ(states.decode(2, cut), kD);
}

// A print format that shows no "prev_state=", and an event without the
// field: every value is unknown (its bits are the value), and stays alive.
// (A format whose print format names a field it lacks is no test case:
// libtraceevent 1.7.1 crashes parsing it, __print_flags(REC->missing, ...).)
TEST(OffcpuTaskStateTest, WithoutPrevStateEveryValueIsUnknown) {
  std::string text = testing::fixture("sched_switch/6.18.format");
  auto at = text.find("prev_state=%s%s");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 11, "state_was=");
  auto f = tracefs::EventFormat::parse(text, "sched");
  ASSERT_TRUE(f.ok());
  TaskStates states(*f);
  EXPECT_EQ(states.decode(0x20, record(*f, 0x20)), (TaskState{0x20, false, false}));
  EXPECT_FALSE(states.index_encoded());

  auto wakeup = tracefs::EventFormat::parse(
      "name: sched_wakeup\nID: 370\nformat:\n"
      "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
      "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
      "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
      "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
      "\tfield:char comm[16];\toffset:8;\tsize:16;\tsigned:0;\n"
      "\tfield:pid_t pid;\toffset:24;\tsize:4;\tsigned:1;\n\n"
      "print fmt: \"comm=%s pid=%d\", REC->comm, REC->pid\n",
      "sched");
  ASSERT_TRUE(wakeup.ok());
  TaskStates none(*wakeup);
  std::vector<uint8_t> raw(28, 0);
  EXPECT_EQ(none.decode(1, raw), (TaskState{1, false, false}));
}

// PF_KTHREAD (0x00200000) in /proc/TID/stat's 9th field, counted from the
// last ')' (a comm may hold both); a thread without a stat file is none.
TEST(KernelThreadsTest, ReadsTheFlagsAfterTheComm) {
  char dir[] = "/tmp/kthreads_test.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  auto stat = [&](int tid, const std::string& text) {
    std::filesystem::create_directory(std::string(dir) + "/" + std::to_string(tid));
    std::ofstream(std::string(dir) + "/" + std::to_string(tid) + "/stat") << text;
  };
  stat(2, "2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0\n");
  stat(7, "7 (a) b (c)) S 1 7 7 0 -1 4194560 0 0 0 0 0 0\n");
  KernelThreads k(dir);
  EXPECT_TRUE(k.is(2));
  EXPECT_FALSE(k.is(7));
  EXPECT_FALSE(k.is(9));
  std::filesystem::remove_all(dir);
  EXPECT_TRUE(k.is(2)) << "read once per thread";
}

}  // namespace
}  // namespace tracekit::offcpu
