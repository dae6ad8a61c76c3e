#include "perf/sample.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "record_builder.hpp"

namespace tracekit::perf {
namespace {

using testing::RecordBuilder;

constexpr uint64_t kAllFields = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                                PERF_SAMPLE_RAW;

const std::vector<uint64_t> kChain = {PERF_CONTEXT_KERNEL, 0xffffffff81000010, 0xffffffff81000020,
                                      PERF_CONTEXT_USER, 0x401000};
// 12 bytes: with its u32 size, two whole u64s, as the kernel pads it.
const std::vector<uint8_t> kRaw = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 0};

// Every supported field, in the kernel's order.
std::vector<uint8_t> full_sample() {
  RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
  b.u64(0x401000);        // IP
  b.u32(1234).u32(1240);  // TID: pid, tid
  b.u64(987654321);       // TIME
  b.u64(0xdead0000);      // ADDR
  b.u64(77);              // ID
  b.u64(78);              // STREAM_ID
  b.u32(1).u32(0);        // CPU, reserved
  b.u64(10101);           // PERIOD
  b.u64(kChain.size());   // CALLCHAIN
  for (uint64_t ip : kChain) b.u64(ip);
  b.u32(static_cast<uint32_t>(kRaw.size())).raw(kRaw.data(), kRaw.size());  // RAW
  return b.build();
}

TEST(PerfSampleTest, DecodesEverySupportedField) {
  auto rec = full_sample();
  ASSERT_EQ(rec.size(), 8u + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 8 + 5 * 8 + 16);
  Sample s;
  ASSERT_TRUE(decode_sample(kAllFields, rec, s));
  EXPECT_EQ(s.ip, 0x401000u);
  EXPECT_EQ(s.pid, 1234u);
  EXPECT_EQ(s.tid, 1240u);
  EXPECT_EQ(s.time, 987654321u);
  EXPECT_EQ(s.addr, 0xdead0000u);
  EXPECT_EQ(s.id, 77u);
  EXPECT_EQ(s.stream_id, 78u);
  EXPECT_EQ(s.cpu, 1u);
  EXPECT_EQ(s.period, 10101u);
  EXPECT_EQ(std::vector<uint64_t>(s.callchain.begin(), s.callchain.end()), kChain);
  EXPECT_EQ(std::vector<uint8_t>(s.raw.begin(), s.raw.end()), kRaw);
  // The spans point into the record, not into copies.
  // Header and nine fixed fields (TID and CPU are two u32 each), then nr.
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(s.callchain.data()), rec.data() + 80);
  EXPECT_EQ(s.raw.data(), rec.data() + 80 + 8 * kChain.size() + 4);
}

struct SubsetCase {
  const char* name;
  uint64_t type;
  std::vector<uint64_t> words;  // the fields as u64 words, after the header
  Sample want;
};

class PerfSampleSubsetTest : public ::testing::TestWithParam<SubsetCase> {};

TEST_P(PerfSampleSubsetTest, DecodesOnlySelectedFields) {
  const auto& c = GetParam();
  RecordBuilder b(PERF_RECORD_SAMPLE);
  for (uint64_t w : c.words) b.u64(w);
  auto rec = b.build();
  Sample s;
  ASSERT_TRUE(decode_sample(c.type, rec, s));
  EXPECT_EQ(s.ip, c.want.ip);
  EXPECT_EQ(s.pid, c.want.pid);
  EXPECT_EQ(s.tid, c.want.tid);
  EXPECT_EQ(s.time, c.want.time);
  EXPECT_EQ(s.addr, c.want.addr);
  EXPECT_EQ(s.id, c.want.id);
  EXPECT_EQ(s.stream_id, c.want.stream_id);
  EXPECT_EQ(s.cpu, c.want.cpu);
  EXPECT_EQ(s.period, c.want.period);
  EXPECT_TRUE(s.callchain.empty());
  EXPECT_TRUE(s.raw.empty());
}

Sample with(void (*set)(Sample&)) {
  Sample s;
  set(s);
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PerfSampleSubsetTest,
    ::testing::Values(
        SubsetCase{"none", 0, {}, {}},
        SubsetCase{"ip", PERF_SAMPLE_IP, {0x1234}, with([](Sample& s) { s.ip = 0x1234; })},
        // pid in the low half of the word (little-endian), tid in the high.
        SubsetCase{"tid", PERF_SAMPLE_TID, {(uint64_t{7} << 32) | 5}, with([](Sample& s) {
                     s.pid = 5, s.tid = 7;
                   })},
        SubsetCase{"time", PERF_SAMPLE_TIME, {42}, with([](Sample& s) { s.time = 42; })},
        SubsetCase{"cpu",
                   PERF_SAMPLE_CPU,
                   {(uint64_t{0xffffffff} << 32) | 3},  // reserved half ignored
                   with([](Sample& s) { s.cpu = 3; })},
        SubsetCase{"period", PERF_SAMPLE_PERIOD, {9}, with([](Sample& s) { s.period = 9; })},
        SubsetCase{"ip_time_cpu",
                   PERF_SAMPLE_IP | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
                   {0x10, 20, 1},
                   with([](Sample& s) { s.ip = 0x10, s.time = 20, s.cpu = 1; })},
        // Order comes from the kernel, not from the bits' listing: ADDR before
        // ID before STREAM_ID, TIME before ADDR.
        SubsetCase{"time_addr_id_stream",
                   PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_ID | PERF_SAMPLE_ADDR | PERF_SAMPLE_TIME,
                   {1, 2, 3, 4},
                   with([](Sample& s) { s.time = 1, s.addr = 2, s.id = 3, s.stream_id = 4; })}),
    [](const ::testing::TestParamInfo<SubsetCase>& info) { return std::string(info.param.name); });

TEST(PerfSampleTest, EveryTruncationIsRejected) {
  const auto full = full_sample();
  // Cut at every 8-byte boundary (records are whole u64s) and at odd places,
  // with the header telling the truth about the shorter size.
  for (size_t len = 8; len < full.size(); ++len) {
    std::vector<uint8_t> rec(full.begin(), full.begin() + len);
    testing::set_size(rec, static_cast<uint16_t>(len));
    Sample s;
    EXPECT_FALSE(decode_sample(kAllFields, rec, s)) << "length " << len;
  }
}

TEST(PerfSampleTest, HeaderLongerThanBufferIsRejected) {
  const auto full = full_sample();
  // The header still claims the full size.
  auto rec = std::span<const uint8_t>(full).first(full.size() - 8);
  Sample s;
  EXPECT_FALSE(decode_sample(kAllFields, rec, s));
  EXPECT_FALSE(decode_sample(kAllFields, rec.first(4), s));
  EXPECT_FALSE(decode_sample(kAllFields, {}, s));
}

TEST(PerfSampleTest, BytesLeftOverAreRejected) {
  // A sample_type that misses a field the kernel wrote must not go unnoticed.
  auto rec = full_sample();
  Sample s;
  EXPECT_FALSE(decode_sample(kAllFields & ~PERF_SAMPLE_PERIOD, rec, s));
  EXPECT_FALSE(decode_sample(kAllFields & ~PERF_SAMPLE_RAW, rec, s));
}

TEST(PerfSampleTest, UnsupportedBitsAreRejected) {
  auto rec = full_sample();
  for (uint64_t bit : std::initializer_list<uint64_t>{
           PERF_SAMPLE_READ, PERF_SAMPLE_BRANCH_STACK, PERF_SAMPLE_IDENTIFIER,
           PERF_SAMPLE_WEIGHT, uint64_t{1} << 62}) {
    Sample s;
    EXPECT_FALSE(decode_sample(kAllFields | bit, rec, s)) << "bit " << bit;
  }
}

constexpr uint64_t kDwarfType = PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER |
                                PERF_SAMPLE_STACK_USER;
constexpr uint64_t kThreeRegs = (1u << 6) | (1u << 7) | (1u << 8);  // bp, sp, ip

// TID, an empty callchain, then the user registers and stack as the kernel
// writes them (perf_output_sample_regs / perf_output_sample_ustack).
RecordBuilder dwarf_sample(uint64_t abi, std::vector<uint64_t> regs, uint64_t size,
                           const std::vector<uint8_t>& stack, uint64_t dyn_size) {
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u32(10).u32(11).u64(0);
  b.u64(abi);
  for (uint64_t r : regs) b.u64(r);
  b.u64(size);
  if (size != 0) {
    b.raw(stack.data(), stack.size());
    b.u64(dyn_size);
  }
  return b;
}

TEST(PerfSampleTest, DecodesUserRegistersAndStack) {
  std::vector<uint8_t> stack(32);
  for (size_t i = 0; i < stack.size(); ++i) stack[i] = static_cast<uint8_t>(i);
  auto rec = dwarf_sample(PERF_SAMPLE_REGS_ABI_64, {0x7ffe0100, 0x7ffe00f0, 0x401234}, 32, stack,
                          24)
                 .build();
  Sample s;
  ASSERT_TRUE(decode_sample(kDwarfType, rec, s, kThreeRegs));
  EXPECT_EQ(s.regs_abi, uint64_t{PERF_SAMPLE_REGS_ABI_64});
  EXPECT_EQ(std::vector<uint64_t>(s.regs_user.begin(), s.regs_user.end()),
            (std::vector<uint64_t>{0x7ffe0100, 0x7ffe00f0, 0x401234}));
  EXPECT_EQ(s.stack_user_size, 32u);
  // Only dyn_size bytes are the stack's.
  EXPECT_EQ(std::vector<uint8_t>(s.stack_user.begin(), s.stack_user.end()),
            std::vector<uint8_t>(stack.begin(), stack.begin() + 24));
}

TEST(PerfSampleTest, NoUserContextHasNoRegistersNorStack) {
  // A kernel thread: ABI_NONE and no registers; stack size 0, no dyn_size.
  auto rec = dwarf_sample(PERF_SAMPLE_REGS_ABI_NONE, {}, 0, {}, 0).build();
  Sample s;
  ASSERT_TRUE(decode_sample(kDwarfType, rec, s, kThreeRegs));
  EXPECT_TRUE(s.regs_user.empty());
  EXPECT_TRUE(s.stack_user.empty());
  EXPECT_EQ(s.stack_user_size, 0u);
}

TEST(PerfSampleTest, BadUserStackRecordsAreRejected) {
  std::vector<uint8_t> stack(16);
  Sample s;
  // dyn_size above size.
  auto big_dyn = dwarf_sample(PERF_SAMPLE_REGS_ABI_64, {1, 2, 3}, 16, stack, 24).build();
  EXPECT_FALSE(decode_sample(kDwarfType, big_dyn, s, kThreeRegs));
  // size beyond the record.
  auto big_size = dwarf_sample(PERF_SAMPLE_REGS_ABI_64, {1, 2, 3}, 64, stack, 8).build();
  EXPECT_FALSE(decode_sample(kDwarfType, big_size, s, kThreeRegs));
  // A mask of more registers than the record holds.
  auto ok = dwarf_sample(PERF_SAMPLE_REGS_ABI_64, {1, 2, 3}, 16, stack, 8).build();
  EXPECT_TRUE(decode_sample(kDwarfType, ok, s, kThreeRegs));
  EXPECT_FALSE(decode_sample(kDwarfType, ok, s, kThreeRegs | 1));
  EXPECT_FALSE(decode_sample(kDwarfType, ok, s, 0x3));
}

// The caller of a probed function's entry: the stack top as the second
// frame, unless the kernel put it there (push %rbp/endbr64 functions on
// Linux 6.11 and later).
TEST(PerfEntryCallerTest, InsertsTheStackTopAsTheSecondFrame) {
  std::vector<uint64_t> buf;
  const std::vector<uint64_t> walked = {0x1000, 0x2000, 0x3000};  // f, caller's caller, ...
  auto with = [&](std::span<const uint64_t> user, uint64_t top, bool frame_entry) {
    auto out = with_entry_caller(user, top, frame_entry, buf);
    return std::vector<uint64_t>(out.begin(), out.end());
  };
  // No frame set up at the entry: the kernel never adds it.
  EXPECT_EQ(with(walked, 0x1500, false), (std::vector<uint64_t>{0x1000, 0x1500, 0x2000, 0x3000}));
  // Even when the next frame is the same address (recursion through one site).
  EXPECT_EQ(with(walked, 0x2000, false), (std::vector<uint64_t>{0x1000, 0x2000, 0x2000, 0x3000}));
  // push %rbp/endbr64: a kernel that added it already (second frame == top).
  const std::vector<uint64_t> added = {0x1000, 0x1500, 0x2000};
  EXPECT_EQ(with(added, 0x1500, true), added);
  // ... and one that did not (before 6.11).
  EXPECT_EQ(with(walked, 0x1500, true), (std::vector<uint64_t>{0x1000, 0x1500, 0x2000, 0x3000}));
  // Only the ip: the caller after it.
  EXPECT_EQ(with(std::vector<uint64_t>{0x1000}, 0x1500, true),
            (std::vector<uint64_t>{0x1000, 0x1500}));
  // No user frames (no user context): nothing.
  EXPECT_TRUE(with({}, 0x1500, false).empty());
}

TEST(PerfEntryCallerTest, StackTopFromTheUserStackSample) {
  constexpr uint64_t kType = PERF_SAMPLE_TID | PERF_SAMPLE_STACK_USER;
  auto sample = [](uint64_t size, const std::vector<uint8_t>& stack, uint64_t dyn_size) {
    RecordBuilder b(PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
    b.u32(1).u32(1).u64(size);
    if (size != 0) b.raw(stack.data(), stack.size()).u64(dyn_size);
    return b.build();
  };
  std::vector<uint8_t> top = {0x34, 0x12, 0x40, 0, 0, 0, 0, 0};
  Sample s;
  ASSERT_TRUE(decode_sample(kType, sample(8, top, 8), s));
  EXPECT_EQ(stack_top(s), std::optional<uint64_t>(0x401234));
  // The kernel could copy nothing (dyn_size 0), or there was no user context.
  Sample none;
  ASSERT_TRUE(decode_sample(kType, sample(8, top, 0), none));
  EXPECT_EQ(stack_top(none), std::nullopt);
  Sample kthread;
  ASSERT_TRUE(decode_sample(kType, sample(0, {}, 0), kthread));
  EXPECT_EQ(stack_top(kthread), std::nullopt);
}

TEST(PerfSampleTest, ParsesCallGraph) {
  auto fp = parse_call_graph("fp");
  ASSERT_TRUE(fp.ok());
  EXPECT_FALSE(fp->dwarf());
  auto dwarf = parse_call_graph("dwarf");
  ASSERT_TRUE(dwarf.ok());
  EXPECT_TRUE(dwarf->dwarf());
  EXPECT_EQ(dwarf->stack_size, 8192u);
  auto sized = parse_call_graph("dwarf,1001");
  ASSERT_TRUE(sized.ok());
  EXPECT_EQ(sized->stack_size, 1008u);  // rounded up to 8, as the kernel needs
  EXPECT_EQ(parse_call_graph("dwarf,65528")->stack_size, 65528u);
  for (const char* bad : {"", "lbr", "fp,8", "dwarf,", "dwarf,0", "dwarf,65529", "dwarf,x",
                          "dwarf,-8", "DWARF"})
    EXPECT_FALSE(parse_call_graph(bad).ok()) << bad;
}

TEST(PerfSampleTest, OtherRecordTypesAreRejected) {
  auto rec = RecordBuilder(PERF_RECORD_COMM).u64(0x401000).build();
  Sample s;
  EXPECT_FALSE(decode_sample(PERF_SAMPLE_IP, rec, s));
}

TEST(PerfSampleTest, CallchainCountBeyondRecordIsRejected) {
  for (uint64_t nr : {uint64_t{3}, uint64_t{1} << 61, ~uint64_t{0}}) {
    auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(nr).u64(1).u64(2).build();
    Sample s;
    EXPECT_FALSE(decode_sample(PERF_SAMPLE_CALLCHAIN, rec, s)) << "nr " << nr;
  }
}

TEST(PerfSampleTest, EmptyCallchain) {
  // PERIOD comes before CALLCHAIN whatever the bits' values.
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(5).u64(0).build();
  Sample s;
  ASSERT_TRUE(decode_sample(PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_PERIOD, rec, s));
  EXPECT_TRUE(s.callchain.empty());
  EXPECT_EQ(s.period, 5u);
}

TEST(PerfSampleTest, RawSizeBeyondRecordIsRejected) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u32(13).u32(0).u64(0).build();
  Sample s;
  EXPECT_FALSE(decode_sample(PERF_SAMPLE_RAW, rec, s));
}

TEST(PerfSampleTest, RawPaddingIsSkipped) {
  // 5 payload bytes: the kernel would say 12 (padded); a producer that says 5
  // still leaves the padding (to 8 + 4 + 5 + 7 = 24), which must be skipped
  // to reach the end.
  const uint8_t payload[5] = {'a', 'b', 'c', 'd', 'e'};
  const uint8_t pad[7] = {};
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u32(5).raw(payload, 5).raw(pad, 7).build();
  ASSERT_EQ(rec.size(), 24u);
  Sample s;
  ASSERT_TRUE(decode_sample(PERF_SAMPLE_RAW, rec, s));
  EXPECT_EQ(std::string(s.raw.begin(), s.raw.end()), "abcde");
  // Without the padding the record is cut short.
  auto cut = RecordBuilder(PERF_RECORD_SAMPLE).u32(5).raw(payload, 5).build();
  EXPECT_FALSE(decode_sample(PERF_SAMPLE_RAW, cut, s));
}

TEST(PerfSampleTest, RawThenNothingElse) {
  // RAW of a tracepoint: the kernel's usual shape (u32 size = 4 + 8k).
  const uint8_t payload[20] = {0x3c, 0x01};
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(99).u32(20).raw(payload, 20).build();
  Sample s;
  ASSERT_TRUE(decode_sample(PERF_SAMPLE_TIME | PERF_SAMPLE_RAW, rec, s));
  EXPECT_EQ(s.time, 99u);
  ASSERT_EQ(s.raw.size(), 20u);
  EXPECT_EQ(s.raw[0], 0x3c);
}

TEST(PerfSampleTest, MisalignedRecordWithCallchainIsRejected) {
  auto rec = RecordBuilder(PERF_RECORD_SAMPLE).u64(0x10).u64(1).u64(0x20).build();
  std::vector<uint8_t> buf(rec.size() + 4);
  std::memcpy(buf.data() + 4, rec.data(), rec.size());
  std::span<const uint8_t> shifted(buf.data() + 4, rec.size());
  Sample s;
  EXPECT_FALSE(decode_sample(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, shifted, s));
  // Fixed fields alone are copied out, so alignment does not matter for them.
  auto plain = RecordBuilder(PERF_RECORD_SAMPLE).u64(0x10).u64(7).build();
  std::memcpy(buf.data() + 4, plain.data(), plain.size());
  ASSERT_TRUE(decode_sample(PERF_SAMPLE_IP | PERF_SAMPLE_TIME,
                            std::span<const uint8_t>(buf.data() + 4, plain.size()), s));
  EXPECT_EQ(s.ip, 0x10u);
  EXPECT_EQ(s.time, 7u);
}

// --- split_callchain ---

constexpr uint64_t K = PERF_CONTEXT_KERNEL;
constexpr uint64_t U = PERF_CONTEXT_USER;

struct SplitCase {
  const char* name;
  std::vector<uint64_t> chain;
  std::vector<uint64_t> kernel, user;
};

class PerfSplitCallchainTest : public ::testing::TestWithParam<SplitCase> {};

TEST_P(PerfSplitCallchainTest, Splits) {
  const auto& c = GetParam();
  Chains got = split_callchain(c.chain);
  EXPECT_EQ(std::vector<uint64_t>(got.kernel.begin(), got.kernel.end()), c.kernel);
  EXPECT_EQ(std::vector<uint64_t>(got.user.begin(), got.user.end()), c.user);
}

INSTANTIATE_TEST_SUITE_P(
    Chains, PerfSplitCallchainTest,
    ::testing::Values(
        SplitCase{"kernel_and_user",
                  {K, 0xffff1, 0xffff2, U, 0x401, 0x402, 0x403},
                  {0xffff1, 0xffff2},
                  {0x401, 0x402, 0x403}},
        SplitCase{"user_only", {U, 0x401, 0x402}, {}, {0x401, 0x402}},
        SplitCase{"kernel_only", {K, 0xffff1}, {0xffff1}, {}},
        SplitCase{"markers_only", {K, U}, {}, {}}, SplitCase{"empty", {}, {}, {}},
        SplitCase{"no_marker_counts_as_kernel", {0xffff1, 0xffff2}, {0xffff1, 0xffff2}, {}},
        SplitCase{"user_before_kernel", {U, 0x401, K, 0xffff1}, {0xffff1}, {0x401}},
        SplitCase{"guest_frames_dropped",
                  {K, 0xffff1, PERF_CONTEXT_GUEST_KERNEL, 0xaaa, PERF_CONTEXT_GUEST_USER, 0xbbb, U,
                   0x401},
                  {0xffff1},
                  {0x401}},
        SplitCase{"hypervisor_frames_dropped", {PERF_CONTEXT_HV, 0xccc, U, 0x401}, {}, {0x401}},
        // -4095 is the smallest marker; -4096 is an ordinary (kernel) address.
        SplitCase{"unknown_marker_drops_frames",
                  {K, static_cast<uint64_t>(-4096), static_cast<uint64_t>(-4095), 0x999, U, 0x401},
                  {static_cast<uint64_t>(-4096)},
                  {0x401}},
        SplitCase{"repeated_marker", {U, U, 0x401}, {}, {0x401}},
        SplitCase{
            "first_run_of_a_side_wins", {U, 0x401, K, 0xffff1, U, 0x402}, {0xffff1}, {0x401}}),
    [](const ::testing::TestParamInfo<SplitCase>& info) { return std::string(info.param.name); });

TEST(PerfSplitCallchainSpanTest, SpansPointIntoTheChain) {
  std::vector<uint64_t> chain = {K, 1, 2, U, 3};
  Chains got = split_callchain(chain);
  EXPECT_EQ(got.kernel.data(), chain.data() + 1);
  EXPECT_EQ(got.user.data(), chain.data() + 4);
}

// --- side-band records ---

TEST(PerfCommRecordTest, DecodesExecComm) {
  auto rec = RecordBuilder(PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC)
                 .u32(300)
                 .u32(301)
                 .padded_string("burner")
                 .u64(123456)  // sample_id trailer (time), ignored
                 .build();
  Comm c;
  ASSERT_TRUE(decode_comm(rec, c));
  EXPECT_EQ(c.pid, 300u);
  EXPECT_EQ(c.tid, 301u);
  EXPECT_EQ(c.comm, "burner");
  EXPECT_TRUE(c.exec);
}

TEST(PerfCommRecordTest, DecodesRenameWithoutExec) {
  // 15 characters: the longest comm, NUL makes exactly 16 bytes.
  auto rec = RecordBuilder(PERF_RECORD_COMM).u32(1).u32(2).padded_string("abcdefghijklmno").build();
  ASSERT_EQ(rec.size(), 32u);
  Comm c;
  ASSERT_TRUE(decode_comm(rec, c));
  EXPECT_EQ(c.comm, "abcdefghijklmno");
  EXPECT_FALSE(c.exec);
}

TEST(PerfCommRecordTest, EmptyName) {
  auto rec = RecordBuilder(PERF_RECORD_COMM).u32(1).u32(2).padded_string("").build();
  Comm c;
  ASSERT_TRUE(decode_comm(rec, c));
  EXPECT_EQ(c.comm, "");
}

TEST(PerfCommRecordTest, RejectsBadRecords) {
  Comm c;
  // No NUL anywhere in the name.
  EXPECT_FALSE(
      decode_comm(RecordBuilder(PERF_RECORD_COMM).u32(1).u32(2).raw("abcdefgh", 8).build(), c));
  // No name at all, and no tid.
  EXPECT_FALSE(decode_comm(RecordBuilder(PERF_RECORD_COMM).u32(1).u32(2).build(), c));
  EXPECT_FALSE(decode_comm(RecordBuilder(PERF_RECORD_COMM).u32(1).build(), c));
  // Not a COMM.
  EXPECT_FALSE(
      decode_comm(RecordBuilder(PERF_RECORD_FORK).u32(1).u32(2).padded_string("x").build(), c));
  EXPECT_FALSE(decode_comm({}, c));
}

TEST(PerfTaskRecordTest, DecodesForkAndExit) {
  for (uint32_t type : {PERF_RECORD_FORK, PERF_RECORD_EXIT}) {
    auto rec = RecordBuilder(type).u32(10).u32(1).u32(11).u32(10).u64(5555).build();
    Task t;
    ASSERT_TRUE(decode_task(rec, t)) << "type " << type;
    EXPECT_EQ(t.pid, 10u);
    EXPECT_EQ(t.ppid, 1u);
    EXPECT_EQ(t.tid, 11u);
    EXPECT_EQ(t.ptid, 10u);
    EXPECT_EQ(t.time, 5555u);
  }
}

TEST(PerfTaskRecordTest, RejectsBadRecords) {
  Task t;
  EXPECT_FALSE(
      decode_task(RecordBuilder(PERF_RECORD_FORK).u32(10).u32(1).u32(11).u32(10).build(), t));
  EXPECT_FALSE(decode_task(
      RecordBuilder(PERF_RECORD_COMM).u32(10).u32(1).u32(11).u32(10).u64(1).build(), t));
}

TEST(PerfLostRecordTest, DecodesLost) {
  auto rec = RecordBuilder(PERF_RECORD_LOST).u64(77).u64(42).build();
  uint64_t lost = 0;
  ASSERT_TRUE(decode_lost(rec, lost));
  EXPECT_EQ(lost, 42u);
}

TEST(PerfLostRecordTest, RejectsBadRecords) {
  uint64_t lost = 9;
  EXPECT_FALSE(decode_lost(RecordBuilder(PERF_RECORD_LOST).u64(77).build(), lost));
  EXPECT_FALSE(decode_lost(RecordBuilder(PERF_RECORD_SAMPLE).u64(77).u64(1).build(), lost));
  EXPECT_EQ(lost, 9u);
}

}  // namespace
}  // namespace tracekit::perf

namespace tracekit::perf {
namespace {

std::vector<uint8_t> switch_record(bool out, uint32_t other_pid, uint32_t other_tid, uint32_t pid,
                                   uint32_t tid, uint64_t time, uint32_t cpu) {
  std::vector<uint8_t> r(8 + 8 + 8 + 8 + 8, 0);
  perf_event_header h{PERF_RECORD_SWITCH_CPU_WIDE,
                      static_cast<uint16_t>(out ? PERF_RECORD_MISC_SWITCH_OUT : 0),
                      static_cast<uint16_t>(r.size())};
  std::memcpy(r.data(), &h, 8);
  uint32_t a[4] = {other_pid, other_tid, pid, tid};
  std::memcpy(r.data() + 8, a, 16);
  std::memcpy(r.data() + 24, &time, 8);
  std::memcpy(r.data() + 32, &cpu, 4);
  return r;
}

TEST(PerfContextSwitchTest, DecodesSwitchInWithSampleId) {
  auto r = switch_record(false, 0, 0, 100, 101, 123456789, 1);
  ContextSwitch cs;
  ASSERT_TRUE(decode_context_switch(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU, r, cs));
  EXPECT_FALSE(cs.out);
  EXPECT_EQ(cs.pid, 100u);
  EXPECT_EQ(cs.tid, 101u);
  EXPECT_EQ(cs.time, 123456789u);
  EXPECT_EQ(cs.cpu, 1u);
  EXPECT_EQ(cs.other_pid, 0u);
}

TEST(PerfContextSwitchTest, SwitchOutAndTruncation) {
  auto r = switch_record(true, 5, 6, 100, 101, 42, 0);
  ContextSwitch cs;
  ASSERT_TRUE(decode_context_switch(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU, r, cs));
  EXPECT_TRUE(cs.out);
  EXPECT_EQ(cs.other_tid, 6u);
  // The same bytes cannot hold an ID field as well.
  EXPECT_FALSE(decode_context_switch(
      PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_CPU, r, cs));
  r.resize(20);
  perf_event_header h{PERF_RECORD_SWITCH_CPU_WIDE, 0, 20};
  std::memcpy(r.data(), &h, 8);
  EXPECT_FALSE(decode_context_switch(PERF_SAMPLE_TID | PERF_SAMPLE_TIME, r, cs));
}

TEST(PerfContextSwitchTest, OtherRecordTypesAreRejected) {
  auto r = switch_record(false, 0, 0, 1, 1, 1, 0);
  perf_event_header h{PERF_RECORD_COMM, 0, static_cast<uint16_t>(r.size())};
  std::memcpy(r.data(), &h, 8);
  ContextSwitch cs;
  EXPECT_FALSE(decode_context_switch(PERF_SAMPLE_TID, r, cs));
}

}  // namespace
}  // namespace tracekit::perf
