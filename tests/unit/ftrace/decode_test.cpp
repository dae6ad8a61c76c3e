// The raw ftrace decoder against pages recorded on a 6.18 kernel
// (tests/fixtures/ftrace, made by record.sh: getppid_n made exactly 101
// getppid calls on CPU 1 with sys_enter_getppid + stacktrace trigger and
// sys_exit_getppid enabled), and against pages built here in the ring
// buffer's layout for the cases a recording cannot pin down.
#include "ftrace/decode.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../fixtures.hpp"
#include "symbols/kallsyms.hpp"
#include "util/strings.hpp"

namespace tracekit::ftrace {
namespace {

constexpr int kCalls = 101;  // getppid calls in the recording
constexpr int kEnterId = 305;
constexpr int kExitId = 304;
constexpr int kStackId = 4;
constexpr int kUserStackId = 13;  // user_stack.format, recorded on another kernel than kernel_stack's
constexpr size_t kPage = 4096;

std::string fixture(const std::string& name) { return testing::fixture("ftrace/" + name); }

TepPtr fixture_tep() {
  auto tep =
      tep_from_formats(fixture("header_page"), {{"ftrace", fixture("kernel_stack.format")},
                                                {"syscalls", fixture("sys_enter_getppid.format")},
                                                {"syscalls", fixture("sys_exit_getppid.format")}});
  EXPECT_TRUE(tep.ok());
  return tep ? std::move(*tep) : nullptr;
}

symbols::KernelSymbols fixture_symbols() {
  std::istringstream in(fixture("kallsyms"));
  return symbols::KernelSymbols::parse(in);
}

// An event as handed out, copied (the spans die with the callback).
struct Seen {
  int cpu, pid, type;
  uint64_t ts;
  std::vector<uint8_t> data;
  std::vector<uint64_t> stack;
  bool has_stack;
};

struct Collector {
  std::vector<Seen> seen;
  Reader::Callback fn() {
    return [this](const Event& e) {
      seen.push_back({e.cpu,
                      e.pid,
                      e.type,
                      e.ts,
                      {e.data.begin(), e.data.end()},
                      {e.stack.begin(), e.stack.end()},
                      e.has_stack});
    };
  }
  int count(int type, bool with_stack) const {
    int n = 0;
    for (auto& s : seen) n += s.type == type && s.has_stack == with_stack;
    return n;
  }
};

std::vector<std::string> names(const symbols::KernelSymbols& syms,
                               const std::vector<uint64_t>& stack) {
  std::vector<std::string> out;
  for (uint64_t a : stack) {
    auto r = syms.lookup(a, true);
    out.push_back(r ? std::string(r->name) : "?");
  }
  return out;
}

class FtraceDecodeFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    raw_ = fixture("cpu1.raw");
    ASSERT_EQ(raw_.size() % kPage, 0u);
    ASSERT_GE(raw_.size() / kPage, 2u);
    tep_ = fixture_tep();
    ASSERT_TRUE(tep_);
    syms_ = fixture_symbols();
  }
  std::span<const uint8_t> page(size_t i) const {
    return {reinterpret_cast<const uint8_t*>(raw_.data()) + i * kPage, kPage};
  }
  size_t pages() const { return raw_.size() / kPage; }
  // The page that ends between an enter event and its stack: decoding up to
  // it leaves exactly that enter waiting. pages() if the recording has none.
  size_t straddle_page() {
    for (size_t i = 0; i + 1 < pages(); ++i) {
      Decoder probe = decoder(true, true);
      Collector pc;
      for (size_t j = 0; j <= i; ++j) probe.decode_page(1, page(j), pc.fn());
      if (probe.finish(pc.fn()) == 1 && pc.seen.back().type == kEnterId) return i;
    }
    return pages();
  }
  Decoder decoder(bool pair, bool strip) {
    auto d = Decoder::create(tep_.get(), StackKinds{pair}, strip ? &syms_ : nullptr);
    EXPECT_TRUE(d.ok()) << (d ? "" : d.error().str());
    return std::move(*d);
  }

  std::string raw_;
  TepPtr tep_;
  symbols::KernelSymbols syms_;
};

TEST_F(FtraceDecodeFixture, ExactlyOneEventPerCallEnterWithStackExitWithout) {
  Decoder d = decoder(true, true);
  Collector c;
  size_t handed = 0;
  for (size_t i = 0; i < pages(); ++i) handed += d.decode_page(1, page(i), c.fn());
  handed += d.finish(c.fn());
  EXPECT_EQ(handed, 2u * kCalls);
  EXPECT_EQ(c.seen.size(), 2u * kCalls);
  EXPECT_EQ(c.count(kEnterId, true), kCalls);
  EXPECT_EQ(c.count(kEnterId, false), 0);
  EXPECT_EQ(c.count(kExitId, false), kCalls);
  EXPECT_EQ(c.count(kStackId, true) + c.count(kStackId, false), 0);
  EXPECT_EQ(d.unpaired(), static_cast<uint64_t>(kCalls));  // the exits
  EXPECT_EQ(d.orphan_stacks(), 0u);
  EXPECT_EQ(d.missed_pages(), 0u);
  EXPECT_EQ(d.bad_pages(), 0u);
  // Every record the kernel handed out was decoded: events plus stacks is
  // the "read events" of the CPU's stats at the end of the recording.
  std::string stats = fixture("stats.txt");
  EXPECT_NE(stats.find("read events: " + std::to_string(handed + kCalls) + "\n"), std::string::npos)
      << stats;

  // One process, one CPU, enter and exit alternating, time moving forward.
  for (size_t i = 0; i < c.seen.size(); ++i) {
    EXPECT_EQ(c.seen[i].pid, c.seen[0].pid);
    EXPECT_EQ(c.seen[i].cpu, 1);
    EXPECT_EQ(c.seen[i].type, i % 2 == 0 ? kEnterId : kExitId) << i;
    if (i > 0) {
      EXPECT_GE(c.seen[i].ts, c.seen[i - 1].ts) << i;
    }
    // The raw record carries the common fields: common_type at 0.
    uint16_t type;
    std::memcpy(&type, c.seen[i].data.data(), 2);
    EXPECT_EQ(type, c.seen[i].type);
  }
  EXPECT_GT(c.seen[0].pid, 0);
  EXPECT_LT(c.seen.back().ts - c.seen.front().ts, 1'000'000'000u);  // one second, in ns
}

TEST_F(FtraceDecodeFixture, TracingFramesStrippedStackStartsAtSyscallEntryWork) {
  Decoder d = decoder(true, true);
  Collector c;
  for (size_t i = 0; i < pages(); ++i) d.decode_page(1, page(i), c.fn());
  std::vector<std::string> want = {"syscall_trace_enter", "do_syscall_64",
                                   "entry_SYSCALL_64_after_hwframe"};
  for (auto& s : c.seen)
    if (s.has_stack) {
      ASSERT_EQ(names(syms_, s.stack), want);
    }
}

TEST_F(FtraceDecodeFixture, WithoutSymbolsTheRecordedStackIsWhole) {
  // kernel_stack's size field counts frames: 4 here, in a 48-byte record
  // (16 + 4 * 8), although the format declares caller[8].
  Decoder d = decoder(true, false);
  Collector c;
  for (size_t i = 0; i < pages(); ++i) d.decode_page(1, page(i), c.fn());
  ASSERT_EQ(c.count(kEnterId, true), kCalls);
  for (auto& s : c.seen)
    if (s.has_stack) {
      ASSERT_EQ(names(syms_, s.stack),
                (std::vector<std::string>{"ftrace_syscall_enter", "syscall_trace_enter",
                                          "do_syscall_64", "entry_SYSCALL_64_after_hwframe"}));
    }
}

TEST_F(FtraceDecodeFixture, EventAndItsStackOnDifferentPagesArePaired) {
  size_t straddle = straddle_page();
  ASSERT_LT(straddle, pages()) << "re-record: no event/stack pair straddles a page";

  // Every page goes through one scratch buffer, as in the reader, and the
  // buffer is scribbled over before the next page: the waiting event must
  // have been copied out of it.
  Decoder d = decoder(true, true);
  Collector c;
  std::vector<uint8_t> buf(kPage);
  for (size_t j = 0; j <= straddle; ++j) {
    std::memcpy(buf.data(), page(j).data(), kPage);
    d.decode_page(1, buf, c.fn());
  }
  size_t handed_before = c.seen.size();
  EXPECT_EQ(handed_before % 2, 0u);  // enter/exit pairs so far; one enter waits
  std::memset(buf.data(), 0xff, kPage);
  std::memcpy(buf.data(), page(straddle + 1).data(), kPage);
  d.decode_page(1, buf, c.fn());
  ASSERT_GT(c.seen.size(), handed_before);
  const Seen& first = c.seen[handed_before];
  EXPECT_EQ(first.type, kEnterId);
  EXPECT_TRUE(first.has_stack);
  EXPECT_EQ(names(syms_, first.stack),
            (std::vector<std::string>{"syscall_trace_enter", "do_syscall_64",
                                      "entry_SYSCALL_64_after_hwframe"}));
  EXPECT_EQ(first.pid, c.seen[0].pid);
  uint16_t type;
  std::memcpy(&type, first.data.data(), 2);
  EXPECT_EQ(type, kEnterId);
  EXPECT_EQ(first.data.size(), c.seen[0].data.size());
  EXPECT_EQ(d.orphan_stacks(), 0u);
}

TEST_F(FtraceDecodeFixture, FinishHandsOutTheEventStillWaitingForItsStack) {
  size_t straddle = straddle_page();
  ASSERT_LT(straddle, pages());
  Decoder d = decoder(true, true);
  Collector c;
  for (size_t i = 0; i <= straddle; ++i) d.decode_page(1, page(i), c.fn());
  // Its time is known while it waits (the reader's progress counts it),
  // and only on its own CPU.
  const auto waiting = d.pending_ts(1);
  ASSERT_TRUE(waiting.has_value());
  EXPECT_GE(*waiting, c.seen.back().ts);
  EXPECT_FALSE(d.pending_ts(0).has_value());
  EXPECT_FALSE(d.pending_ts(1000).has_value());
  uint64_t unpaired = d.unpaired();
  EXPECT_EQ(d.finish(c.fn()), 1u);
  EXPECT_EQ(c.seen.back().type, kEnterId);
  EXPECT_EQ(c.seen.back().ts, *waiting);
  EXPECT_FALSE(c.seen.back().has_stack);
  EXPECT_EQ(d.unpaired(), unpaired + 1);
  EXPECT_FALSE(d.pending_ts(1).has_value());
  EXPECT_EQ(d.finish(c.fn()), 0u);
}

TEST_F(FtraceDecodeFixture, NotPairingHandsOutEventsAtOnceAndSkipsStacks) {
  Decoder d = decoder(false, true);
  Collector c;
  size_t handed = 0;
  for (size_t i = 0; i < pages(); ++i) handed += d.decode_page(1, page(i), c.fn());
  EXPECT_EQ(d.finish(c.fn()), 0u);
  EXPECT_EQ(handed, 2u * kCalls);
  EXPECT_EQ(c.count(kEnterId, false), kCalls);
  EXPECT_EQ(c.count(kExitId, false), kCalls);
  EXPECT_EQ(d.unpaired(), 0u);
  EXPECT_EQ(d.orphan_stacks(), 0u);
}

TEST_F(FtraceDecodeFixture, ShortReadIsRejectedNotOverrun) {
  Decoder d = decoder(true, true);
  Collector c;
  EXPECT_EQ(d.decode_page(1, page(0).subspan(0, 100), c.fn()), 0u);
  EXPECT_EQ(d.decode_page(1, page(0).subspan(0, 8), c.fn()), 0u);
  EXPECT_EQ(d.bad_pages(), 2u);
  EXPECT_TRUE(c.seen.empty());
}

TEST(FtraceFormats, UnparsableFormatsAreCountedNotFatal) {
  int failures = -1;
  auto tep = tep_from_formats(
      fixture("header_page"),
      {{"ftrace", fixture("kernel_stack.format")}, {"syscalls", "not a format"}}, &failures);
  ASSERT_TRUE(tep.ok());
  EXPECT_EQ(failures, 1);
  EXPECT_TRUE(Decoder::create(tep->get(), StackKinds{true}, nullptr).ok());
}

TEST(FtraceFormats, PairingNeedsKernelStack) {
  auto tep =
      tep_from_formats(fixture("header_page"), {{"syscalls", fixture("sys_enter_getppid.format")}});
  ASSERT_TRUE(tep.ok());
  EXPECT_FALSE(Decoder::create(tep->get(), StackKinds{true}, nullptr).ok());
  EXPECT_TRUE(Decoder::create(tep->get(), StackKinds{}, nullptr).ok());
}

// Pages built by hand, in the ring buffer's layout: u64 timestamp, u64
// commit (data bytes | loss flags), then records: a u32 header (type_len in
// the low 5 bits = data length / 4, time delta above), then the data.
class PageBuilder {
 public:
  explicit PageBuilder(uint64_t ts = 1000) : page_(kPage, 0) { put64(0, ts); }
  PageBuilder& event(int type, int pid, uint32_t delta = 10) {
    std::vector<uint8_t> d(12, 0);
    put_common(d, type, pid);
    return record(d, delta);
  }
  PageBuilder& stack(int pid, std::vector<uint64_t> frames, int size_field = -1) {
    std::vector<uint8_t> d(16 + frames.size() * 8, 0);
    put_common(d, kStackId, pid);
    int32_t n = size_field >= 0 ? size_field : static_cast<int32_t>(frames.size());
    std::memcpy(d.data() + 8, &n, 4);
    std::memcpy(d.data() + 16, frames.data(), frames.size() * 8);
    return record(d, 1);
  }
  // A user_stack record: tgid, then caller[8] (zero-filled past frames).
  PageBuilder& user_stack(int pid, int tgid, std::vector<uint64_t> frames) {
    frames.resize(8, 0);
    std::vector<uint8_t> d(16 + 64, 0);
    put_common(d, kUserStackId, pid);
    uint32_t t = static_cast<uint32_t>(tgid);
    std::memcpy(d.data() + 8, &t, 4);
    std::memcpy(d.data() + 16, frames.data(), 64);
    return record(d, 1);
  }
  // Whether another record of data_bytes fits on the page.
  bool fits(size_t data_bytes) const { return off_ + 4 + data_bytes <= kPage; }
  PageBuilder& missed() {
    flags_ |= 1ull << 31;
    return *this;
  }
  std::span<const uint8_t> bytes() {
    put64(8, (off_ - 16) | flags_);
    return page_;
  }

 private:
  static void put_common(std::vector<uint8_t>& d, int type, int pid) {
    uint16_t t = static_cast<uint16_t>(type);
    int32_t p = pid;
    std::memcpy(d.data(), &t, 2);
    std::memcpy(d.data() + 4, &p, 4);
  }
  PageBuilder& record(const std::vector<uint8_t>& d, uint32_t delta) {
    uint32_t h = static_cast<uint32_t>(d.size() / 4) | (delta << 5);
    std::memcpy(page_.data() + off_, &h, 4);
    std::memcpy(page_.data() + off_ + 4, d.data(), d.size());
    off_ += 4 + d.size();
    return *this;
  }
  void put64(size_t at, uint64_t v) { std::memcpy(page_.data() + at, &v, 8); }
  std::vector<uint8_t> page_;
  size_t off_ = 16;
  uint64_t flags_ = 0;
};

class FtraceDecodeBuilt : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tep = tep_from_formats(fixture("header_page"),
                                {{"ftrace", fixture("kernel_stack.format")},
                                 {"syscalls", fixture("sys_enter_getppid.format")},
                                 {"syscalls", fixture("sys_exit_getppid.format")}});
    ASSERT_TRUE(tep.ok());
    tep_ = std::move(*tep);
    auto d = Decoder::create(tep_.get(), StackKinds{true}, nullptr);
    ASSERT_TRUE(d.ok());
    d_.emplace(std::move(*d));
  }
  TepPtr tep_;
  std::optional<Decoder> d_;
  Collector c_;
};

TEST_F(FtraceDecodeBuilt, TimestampsAddUpFromThePageTime) {
  PageBuilder p(5000);
  p.event(kEnterId, 7, 100).stack(7, {0x10, 0x20}).event(kExitId, 7, 50);
  d_->decode_page(0, p.bytes(), c_.fn());
  d_->finish(c_.fn());
  ASSERT_EQ(c_.seen.size(), 2u);
  EXPECT_EQ(c_.seen[0].ts, 5100u);
  EXPECT_EQ(c_.seen[1].ts, 5151u);  // + the stack's delta of 1
  EXPECT_EQ(c_.seen[0].stack, (std::vector<uint64_t>{0x10, 0x20}));
}

TEST_F(FtraceDecodeBuilt, StackOfAnotherPidIsAnOrphan) {
  PageBuilder p;
  p.event(kEnterId, 7).stack(8, {0x10}).event(kEnterId, 7).stack(7, {0x30});
  EXPECT_EQ(d_->decode_page(0, p.bytes(), c_.fn()), 2u);
  ASSERT_EQ(c_.seen.size(), 2u);
  EXPECT_FALSE(c_.seen[0].has_stack);
  EXPECT_TRUE(c_.seen[1].has_stack);
  EXPECT_EQ(c_.seen[1].stack, (std::vector<uint64_t>{0x30}));
  EXPECT_EQ(d_->orphan_stacks(), 1u);
  EXPECT_EQ(d_->unpaired(), 1u);
}

TEST_F(FtraceDecodeBuilt, StackAtTheTopOfAPageAfterLostEventsIsNotPaired) {
  PageBuilder a;
  a.event(kEnterId, 7);
  PageBuilder b;
  b.missed().stack(7, {0x10}).event(kExitId, 7);
  d_->decode_page(0, a.bytes(), c_.fn());
  d_->decode_page(0, b.bytes(), c_.fn());
  d_->finish(c_.fn());
  ASSERT_EQ(c_.seen.size(), 2u);
  EXPECT_EQ(c_.seen[0].type, kEnterId);
  EXPECT_FALSE(c_.seen[0].has_stack);
  EXPECT_EQ(d_->missed_pages(), 1u);
  EXPECT_EQ(d_->orphan_stacks(), 1u);
}

TEST_F(FtraceDecodeBuilt, PairingStateIsPerCpu) {
  PageBuilder cpu0, cpu1, cpu0b;
  cpu0.event(kEnterId, 7);
  cpu1.event(kEnterId, 9).stack(9, {0x90});
  cpu0b.stack(7, {0x70});
  d_->decode_page(0, cpu0.bytes(), c_.fn());
  d_->decode_page(1, cpu1.bytes(), c_.fn());
  d_->decode_page(0, cpu0b.bytes(), c_.fn());
  ASSERT_EQ(c_.seen.size(), 2u);
  EXPECT_EQ(c_.seen[0].cpu, 1);
  EXPECT_EQ(c_.seen[0].stack, (std::vector<uint64_t>{0x90}));
  EXPECT_EQ(c_.seen[1].cpu, 0);
  EXPECT_EQ(c_.seen[1].stack, (std::vector<uint64_t>{0x70}));
}

TEST_F(FtraceDecodeBuilt, FrameCountIsTheSizeFieldBoundedByTheRecord) {
  PageBuilder p;
  p.event(kEnterId, 7).stack(7, {1, 2, 3}, 2);   // size says 2 of 3
  p.event(kEnterId, 7).stack(7, {1, 2, 3}, 50);  // size beyond the record
  p.event(kEnterId, 7).stack(7, {}, 0);
  d_->decode_page(0, p.bytes(), c_.fn());
  ASSERT_EQ(c_.seen.size(), 3u);
  EXPECT_EQ(c_.seen[0].stack, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(c_.seen[1].stack, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(c_.seen[2].has_stack);
  EXPECT_TRUE(c_.seen[2].stack.empty());
}

TEST(FtraceStrip, AStackOfOnlyTracingFramesIsKeptWhole) {
  auto tep =
      tep_from_formats(fixture("header_page"), {{"ftrace", fixture("kernel_stack.format")},
                                                {"syscalls", fixture("sys_enter_getppid.format")}});
  ASSERT_TRUE(tep.ok());
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 t kprobe_dispatcher\n"
      "ffffffff81000200 t uprobe_dispatcher\n"
      "ffffffff81000300 T do_work\n"
      "ffffffff81000400 T _etext\n");
  auto syms = symbols::KernelSymbols::parse(in);
  auto d = Decoder::create(tep->get(), StackKinds{true}, &syms);
  ASSERT_TRUE(d.ok());
  Collector c;
  PageBuilder p;
  p.event(kEnterId, 7).stack(7, {0xffffffff81000110, 0xffffffff81000310});
  p.event(kEnterId, 7).stack(7, {0xffffffff81000110, 0xffffffff81000210});
  d->decode_page(0, p.bytes(), c.fn());
  ASSERT_EQ(c.seen.size(), 2u);
  EXPECT_EQ(c.seen[0].stack, (std::vector<uint64_t>{0xffffffff81000310}));
  EXPECT_EQ(c.seen[1].stack, (std::vector<uint64_t>{0xffffffff81000110, 0xffffffff81000210}));
}

// User stacks (options/userstacktrace): a user_stack record after the event
// and after its kernel_stack record when there is one.
class FtraceDecodeUserStacks : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tep = tep_from_formats(fixture("header_page"),
                                {{"ftrace", fixture("kernel_stack.format")},
                                 {"ftrace", fixture("user_stack.format")},
                                 {"syscalls", fixture("sys_enter_getppid.format")},
                                 {"syscalls", fixture("sys_exit_getppid.format")}});
    ASSERT_TRUE(tep.ok());
    tep_ = std::move(*tep);
  }
  Decoder decoder(StackKinds k) {
    auto d = Decoder::create(tep_.get(), k, nullptr);
    EXPECT_TRUE(d.ok());
    return std::move(*d);
  }
  // Copies what the callback sees, user stack included.
  struct UserSeen {
    int type;
    bool has_stack, has_user_stack;
    std::vector<uint64_t> stack, user_stack;
    int tgid;
    std::vector<uint8_t> stack_record, user_stack_record;
  };
  Reader::Callback collect() {
    return [this](const Event& e) {
      seen_.push_back({e.type, e.has_stack, e.has_user_stack,
                       {e.stack.begin(), e.stack.end()}, {e.user_stack.begin(), e.user_stack.end()},
                       e.user_tgid, {e.stack_record.begin(), e.stack_record.end()},
                       {e.user_stack_record.begin(), e.user_stack_record.end()}});
    };
  }
  TepPtr tep_;
  std::vector<UserSeen> seen_;
};

TEST_F(FtraceDecodeUserStacks, UserStackAloneIsPairedAndEndsAtTheFirstZero) {
  Decoder d = decoder({.kernel = false, .user = true});
  PageBuilder p;
  p.event(kEnterId, 7).user_stack(7, 5, {0x5000, 0x7000});
  p.event(kEnterId, 7).event(kExitId, 8).user_stack(8, 8, {0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8});
  EXPECT_EQ(d.decode_page(0, p.bytes(), collect()), 3u);
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_TRUE(seen_[0].has_user_stack);
  EXPECT_FALSE(seen_[0].has_stack);
  EXPECT_EQ(seen_[0].user_stack, (std::vector<uint64_t>{0x5000, 0x7000}));
  EXPECT_EQ(seen_[0].tgid, 5);
  EXPECT_FALSE(seen_[1].has_user_stack);  // the next event came first
  EXPECT_EQ(seen_[2].user_stack.size(), 8u);
  EXPECT_EQ(d.unpaired(), 1u);
  EXPECT_EQ(d.orphan_stacks(), 0u);
}

TEST_F(FtraceDecodeUserStacks, KernelThenUserStackBothPaired) {
  Decoder d = decoder({.kernel = true, .user = true});
  PageBuilder p;
  p.event(kEnterId, 7).stack(7, {0x10, 0x20}).user_stack(7, 7, {0x5000});
  p.event(kEnterId, 7).user_stack(7, 7, {0x6000});  // kernel stack lost: user still pairs
  p.event(kEnterId, 7).user_stack(7, 7, {0x6000}).stack(7, {0x30});  // out of order: orphan
  d.decode_page(0, p.bytes(), collect());
  d.finish(collect());
  ASSERT_EQ(seen_.size(), 3u);
  EXPECT_EQ(seen_[0].stack, (std::vector<uint64_t>{0x10, 0x20}));
  EXPECT_EQ(seen_[0].user_stack, (std::vector<uint64_t>{0x5000}));
  EXPECT_FALSE(seen_[1].has_stack);
  EXPECT_EQ(seen_[1].user_stack, (std::vector<uint64_t>{0x6000}));
  EXPECT_TRUE(seen_[2].has_user_stack);
  EXPECT_FALSE(seen_[2].has_stack);
  EXPECT_EQ(d.unpaired(), 2u);
  EXPECT_EQ(d.orphan_stacks(), 1u);
}

TEST_F(FtraceDecodeUserStacks, OldKernelsEndAShortWalkWithAllOnes) {
  Decoder d = decoder({.user = true});
  PageBuilder p;
  p.event(kEnterId, 7).user_stack(7, 7, {0x5000, ~uint64_t{0}, 0x9999});
  d.decode_page(0, p.bytes(), collect());
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0].user_stack, (std::vector<uint64_t>{0x5000}));
}

TEST_F(FtraceDecodeUserStacks, UnpairedUserStacksAreSkippedWhenNotAsked) {
  Decoder d = decoder({.kernel = true});
  PageBuilder p;
  p.event(kEnterId, 7).stack(7, {0x10}).user_stack(7, 7, {0x5000});
  d.decode_page(0, p.bytes(), collect());
  d.finish(collect());
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_FALSE(seen_[0].has_user_stack);
  EXPECT_EQ(d.orphan_stacks(), 0u);
  EXPECT_EQ(d.unpaired(), 0u);
}

// An event and its kernel stack at the end of one page, its user stack at
// the top of the next: the page buffer is reused between reads, so the
// records waiting for the user stack must be copies.
TEST_F(FtraceDecodeUserStacks, RecordsSurviveTheirPageWhileWaiting) {
  Decoder d = decoder({.kernel = true, .user = true});
  PageBuilder a;
  while (a.fits(12 + 4 + 24 + 4 + 12 + 4 + 24)) a.event(kEnterId, 7).stack(7, {0x1, 0x2});
  a.event(kEnterId, 9).stack(9, {0xaa, 0xbb});
  std::vector<uint8_t> page(a.bytes().begin(), a.bytes().end());
  d.decode_page(0, page, collect());
  std::fill(page.begin(), page.end(), 0xee);  // the reader's next read overwrites it
  size_t before = seen_.size();
  PageBuilder b;
  b.user_stack(9, 9, {0x5000});
  d.decode_page(0, b.bytes(), collect());
  ASSERT_EQ(seen_.size(), before + 1);
  const auto& s = seen_.back();
  EXPECT_EQ(s.type, kEnterId);
  EXPECT_EQ(s.stack, (std::vector<uint64_t>{0xaa, 0xbb}));
  EXPECT_EQ(s.user_stack, (std::vector<uint64_t>{0x5000}));
  ASSERT_EQ(s.stack_record.size(), 16u + 16u);
  uint64_t first;
  std::memcpy(&first, s.stack_record.data() + 16, 8);
  EXPECT_EQ(first, 0xaau);
}

TEST(FtraceFormats, UserStackPairingNeedsItsFormat) {
  auto tep = tep_from_formats(fixture("header_page"), {{"ftrace", fixture("kernel_stack.format")},
                                                       {"syscalls", fixture("sys_enter_getppid.format")}});
  ASSERT_TRUE(tep.ok());
  EXPECT_FALSE(Decoder::create(tep->get(), {.user = true}, nullptr).ok());
  EXPECT_TRUE(Decoder::create(tep->get(), {.kernel = true}, nullptr).ok());
}

}  // namespace
}  // namespace tracekit::ftrace
