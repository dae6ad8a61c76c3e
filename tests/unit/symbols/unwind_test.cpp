#include "symbols/unwind.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "symbols/user.hpp"

namespace tracekit::symbols {
namespace {

// ax..ip and r8..r15: what --call-graph dwarf samples.
constexpr uint64_t kMask = 0xff01ffULL;

// A sample's registers of kMask, each perf register n holding 100 + n.
std::vector<uint64_t> numbered_regs() {
  std::vector<uint64_t> regs;
  for (unsigned n = 0; n < 64; ++n)
    if (kMask & (uint64_t{1} << n)) regs.push_back(100 + n);
  return regs;
}

TEST(SymbolsUnwindTest, PerfRegistersByNumber) {
  auto regs = numbered_regs();
  ASSERT_EQ(regs.size(), 17u);
  EXPECT_EQ(perf_reg(regs, kMask, kPerfAx), 100u);
  EXPECT_EQ(perf_reg(regs, kMask, kPerfIp), 108u);
  EXPECT_EQ(perf_reg(regs, kMask, kPerfR8), 116u);
  EXPECT_EQ(perf_reg(regs, kMask, kPerfR8 + 7), 123u);
  EXPECT_FALSE(perf_reg(regs, kMask, 9).has_value());  // flags: not in the mask
  EXPECT_FALSE(perf_reg(regs, kMask, 64).has_value());
  EXPECT_FALSE(perf_reg(std::span(regs).first(8), kMask, kPerfIp).has_value());  // too short
}

TEST(SymbolsUnwindTest, DwarfRegistersInDwarfOrder) {
  auto r = dwarf_regs(numbered_regs(), kMask);
  ASSERT_TRUE(r.has_value());
  // rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip, from perf's
  // ax bx cx dx si di bp sp ip ... r8..r15.
  const DwarfRegs want = {100, 103, 102, 101, 104, 105, 106, 107, 116,
                          117, 118, 119, 120, 121, 122, 123, 108};
  EXPECT_EQ(*r, want);
  // Without r15 (bit 23) the unwinder cannot have all it needs.
  auto fewer = numbered_regs();
  fewer.pop_back();
  EXPECT_FALSE(dwarf_regs(fewer, kMask & ~(uint64_t{1} << 23)).has_value());
}

TEST(SymbolsUnwindTest, StackCopyReads) {
  std::vector<uint8_t> bytes(24);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i + 1);
  StackCopy s{0x7ffd1000, bytes};
  uint64_t want;
  std::memcpy(&want, bytes.data() + 8, 8);
  EXPECT_EQ(s.read(0x7ffd1008), want);
  EXPECT_TRUE(s.read(0x7ffd1000).has_value());
  EXPECT_TRUE(s.read(0x7ffd1010).has_value());   // the last whole word
  EXPECT_FALSE(s.read(0x7ffd1011).has_value());  // runs past the copy
  EXPECT_FALSE(s.read(0x7ffd0ff8).has_value());  // below sp
  EXPECT_FALSE(s.read(~uint64_t{0} - 3).has_value());
  EXPECT_FALSE(s.beyond(0x7ffd1010));
  EXPECT_TRUE(s.beyond(0x7ffd1011));
  EXPECT_TRUE(s.beyond(0x7ffd2000));
  EXPECT_FALSE(s.beyond(0x7ffd0ff8));
}

// A sample of this very thread, taken in sample_here(): its registers (sp,
// bp and ip as they are at the label; the others are not needed to find
// the callers) and kStack bytes of stack from sp up.
constexpr size_t kStack = 8192;
struct SelfSample {
  std::vector<uint64_t> regs;
  std::vector<uint8_t> stack;
  bool whole = true;  // all kStack bytes (the stack did not end before)
};

// The end of the mapping holding addr (/proc/self/maps), 0 if none.
uint64_t mapping_end(uint64_t addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2 && addr >= lo && addr < hi) return hi;
  }
  return 0;
}

__attribute__((noinline)) void sample_here(SelfSample& s) {
  uint64_t ip, sp, bp;
  asm volatile(
      "lea 0(%%rip), %0\n\t"
      "mov %%rsp, %1\n\t"
      "mov %%rbp, %2"
      : "=r"(ip), "=r"(sp), "=r"(bp));
  s.regs.assign(17, 0);
  s.regs[kPerfBp] = bp;
  s.regs[kPerfSp] = sp;
  s.regs[kPerfIp] = ip;
  // As the kernel does: no further than the stack goes.
  uint64_t n = std::min<uint64_t>(kStack, mapping_end(sp) - sp);
  s.whole = n == kStack;
  s.stack.resize(n);
  std::memcpy(s.stack.data(), reinterpret_cast<const void*>(sp), n);
  asm volatile("" ::: "memory");
}

extern "C" __attribute__((noinline)) void unwind_test_inner(SelfSample& s) {
  sample_here(s);
  asm volatile("" ::: "memory");  // not a tail call
}
extern "C" __attribute__((noinline)) void unwind_test_outer(SelfSample& s) {
  unwind_test_inner(s);
  asm volatile("" ::: "memory");
}

std::vector<std::string> names(UserSymbols& us, const std::vector<uint64_t>& frames) {
  std::vector<std::string> out;
  for (size_t i = 0; i < frames.size(); ++i) {
    auto r = us.lookup(getpid(), frames[i], i > 0);
    out.push_back(r ? std::string(r->name) : "[unknown]");
  }
  return out;
}

size_t index_of(const std::vector<std::string>& v, const std::string& s) {
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i] == s) return i;
  return v.size();
}

TEST(SymbolsUnwindTest, UnwindsItsOwnStack) {
  SelfSample s;
  unwind_test_outer(s);
  UserSymbols us;
  std::vector<uint64_t> frames;
  auto r = us.unwind(getpid(), s.regs, kMask, s.stack, s.whole, 127, frames);
  ASSERT_EQ(r.frames, frames.size());
  auto n = names(us, frames);
  std::string all;
  for (auto& x : n) all += x + " ";
  ASSERT_GE(n.size(), 3u) << all;
  EXPECT_NE(n[0].find("sample_here"), std::string::npos) << all;
  EXPECT_EQ(n[1], "unwind_test_inner") << all;
  EXPECT_EQ(n[2], "unwind_test_outer") << all;
  // Further up: the test body, then GoogleTest's frames.
  EXPECT_LT(index_of(n, "unwind_test_outer"), n.size());

  // Again, in the same session: the same frames.
  std::vector<uint64_t> again;
  us.unwind(getpid(), s.regs, kMask, s.stack, s.whole, 127, again);
  EXPECT_EQ(again, frames);

  // Capped: max_frames frames, then the unknown one.
  std::vector<uint64_t> capped;
  auto c = us.unwind(getpid(), s.regs, kMask, s.stack, s.whole, 2, capped);
  EXPECT_TRUE(c.stopped);
  ASSERT_EQ(capped.size(), 3u);
  EXPECT_EQ(capped[0], frames[0]);
  EXPECT_EQ(capped[1], frames[1]);
  EXPECT_EQ(capped[2], 0u);
}

TEST(SymbolsUnwindTest, AShortCopyIsCutNotMisattributed) {
  SelfSample s;
  unwind_test_outer(s);
  UserSymbols us;
  std::vector<uint64_t> whole;
  us.unwind(getpid(), s.regs, kMask, s.stack, s.whole, 127, whole);
  ASSERT_GE(whole.size(), 4u);
  // 16 bytes of stack: sample_here's frame alone is bigger.
  std::vector<uint64_t> frames;
  auto r = us.unwind(getpid(), s.regs, kMask, std::span(s.stack).first(16), true, 127, frames);
  EXPECT_TRUE(r.cut);
  EXPECT_TRUE(r.stopped);
  ASSERT_GE(frames.size(), 2u);
  EXPECT_EQ(frames.back(), 0u);
  // What was unwound is the start of the whole stack, nothing else.
  for (size_t i = 0; i + 1 < frames.size(); ++i) EXPECT_EQ(frames[i], whole[i]) << i;
  // The same copy, short because the stack ended there: stopped, not cut.
  std::vector<uint64_t> ended;
  auto e = us.unwind(getpid(), s.regs, kMask, std::span(s.stack).first(16), false, 127, ended);
  EXPECT_FALSE(e.cut);
  EXPECT_TRUE(e.stopped);
}

TEST(SymbolsUnwindTest, MissingRegistersUnwindNothing) {
  UserSymbols us;
  std::vector<uint64_t> regs(3, 0), frames;
  std::vector<uint8_t> stack(64);
  auto r = us.unwind(getpid(), regs, 0x1c0, stack, true, 127, frames);  // bp, sp, ip only
  EXPECT_EQ(r.frames, 0u);
  EXPECT_TRUE(frames.empty());
}

TEST(SymbolsUnwindTest, AnIpInNoFileIsTheOnlyFrame) {
  UserSymbols us;
  auto regs = numbered_regs();  // ip 108: nothing mapped there
  std::vector<uint64_t> frames;
  std::vector<uint8_t> stack(64);
  auto r = us.unwind(getpid(), regs, kMask, stack, true, 127, frames);
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(frames, (std::vector<uint64_t>{108, 0}));
}

}  // namespace
}  // namespace tracekit::symbols
