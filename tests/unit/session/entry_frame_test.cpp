#include "session/entry_frame.hpp"

#include <gtest/gtest.h>

#include <cstring>

namespace tracekit::stackcount {
namespace {

const char* kSyms =
    "ffffffff81100000 T vfs_read\n"
    "ffffffff81100100 T SyS_read\n"
    "ffffffff81100200 T kernel_read\n"
    "ffffffff81200000 T entry_SYSCALL_64_fastpath\n"
    "ffffffff81300000 T _etext\n";

std::vector<uint64_t> v(std::span<const uint64_t> s) { return {s.begin(), s.end()}; }

// 4.4 (frame pointers): a kprobe's stack at vfs_read's entry is its
// caller's caller and the end marker; the probed function goes first.
TEST(EntryFrameTest, ProbedFunctionPutFirst) {
  auto ksyms = symbols::KernelSymbols::parse(kSyms);
  std::vector<uint64_t> buf;
  const std::vector<uint64_t> fp = {0xffffffff81200050, ~uint64_t{0}};
  EXPECT_EQ(v(with_probed_function(fp, 0xffffffff81100000, ksyms, buf)),
            (std::vector<uint64_t>{0xffffffff81100000, 0xffffffff81200050}));
  // ORC (4.14+): the stack starts in vfs_read already: unchanged.
  const std::vector<uint64_t> orc = {0xffffffff81100001, 0xffffffff81100145, 0xffffffff81200050};
  EXPECT_EQ(v(with_probed_function(orc, 0xffffffff81100000, ksyms, buf)), orc);
  // No probe address: only the end marker goes.
  EXPECT_EQ(v(with_probed_function(fp, 0, ksyms, buf)),
            (std::vector<uint64_t>{0xffffffff81200050}));
}

// The function tracer: the function and its caller from the record where
// the stack lacks them (3.10), both when it is empty (4.14), none when it
// has them (4.4: vfs_read+5, SyS_read...).
TEST(EntryFrameTest, FunctionTracerCaller) {
  auto ksyms = symbols::KernelSymbols::parse(kSyms);
  std::vector<uint64_t> buf;
  const uint64_t ip = 0xffffffff81100000, parent = 0xffffffff81100145;
  EXPECT_EQ(v(with_probed_function(std::vector<uint64_t>{0xffffffff81200050}, ip, ksyms, buf,
                                   parent)),
            (std::vector<uint64_t>{ip, parent, 0xffffffff81200050}));
  EXPECT_EQ(v(with_probed_function(std::vector<uint64_t>{~uint64_t{0}}, ip, ksyms, buf, parent)),
            (std::vector<uint64_t>{ip, parent}));
  const std::vector<uint64_t> full = {0xffffffff81100005, parent, 0xffffffff81200050};
  EXPECT_EQ(v(with_probed_function(full, ip, ksyms, buf, parent)), full);
}

TEST(EntryFrameTest, RecordFields) {
  std::vector<uint8_t> rec(24, 0);
  uint64_t ip = 0xffffffff81100000, parent = 0xffffffff81100145;
  std::memcpy(rec.data() + 8, &ip, 8);
  std::memcpy(rec.data() + 16, &parent, 8);
  EXPECT_EQ(kprobe_ip(rec), ip);
  EXPECT_EQ(function_entry(rec).ip, ip);
  EXPECT_EQ(function_entry(rec).parent_ip, parent);
  EXPECT_EQ(kprobe_ip(std::span<const uint8_t>(rec).first(12)), 0u);
  EXPECT_EQ(function_entry(std::span<const uint8_t>(rec).first(20)).ip, 0u);
}

}  // namespace
}  // namespace tracekit::stackcount
