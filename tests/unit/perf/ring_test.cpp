// The ring's reader over a fake mmap layout: a control page and a small data
// area in ordinary memory, written the way the kernel writes them.
#include "perf/ring.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "perf/sample.hpp"
#include "record_builder.hpp"

namespace tracekit::perf {
namespace {

using testing::RecordBuilder;

// Plays the kernel: copies records in at data_head, wrapping at the end.
class FakeRing {
 public:
  explicit FakeRing(uint64_t size) : size_(size), data_(size / 8) {
    control_ = std::make_unique<perf_event_mmap_page>();
    std::memset(control_.get(), 0, sizeof *control_);
  }

  // Starts both counters at pos, as if pos bytes had been written and read.
  void start_at(uint64_t pos) { control_->data_head = control_->data_tail = pos; }

  void write(const std::vector<uint8_t>& rec) {
    auto* bytes = reinterpret_cast<uint8_t*>(data_.data());
    for (size_t i = 0; i < rec.size(); ++i) bytes[(control_->data_head + i) % size_] = rec[i];
    control_->data_head += rec.size();
  }

  // Sets a counter to what no kernel would publish.
  void set_head(uint64_t v) { control_->data_head = v; }
  void set_tail(uint64_t v) { control_->data_tail = v; }

  uint64_t head() const { return control_->data_head; }
  uint64_t tail() const { return control_->data_tail; }
  Ring ring() {
    return Ring::over(control_.get(), reinterpret_cast<const uint8_t*>(data_.data()), size_);
  }

 private:
  uint64_t size_;
  std::vector<uint64_t> data_;  // u64 storage: 8-byte aligned like the real ring
  std::unique_ptr<perf_event_mmap_page> control_;
};

// A SAMPLE carrying IP only, n words long in all (header included).
std::vector<uint8_t> sample_rec(uint64_t ip, size_t words = 2) {
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(ip);
  for (size_t i = 2; i < words; ++i) b.u64(0);
  return b.build();
}

struct Seen {
  uint32_t type;
  std::vector<uint8_t> bytes;
};

std::vector<Seen> drain_all(Ring& r, size_t* n = nullptr) {
  std::vector<Seen> seen;
  size_t got = r.drain([&](const perf_event_header& h, std::span<const uint8_t> rec) {
    EXPECT_EQ(h.size, rec.size());
    seen.push_back({h.type, {rec.begin(), rec.end()}});
  });
  if (n != nullptr) *n = got;
  return seen;
}

TEST(PerfRingTest, EmptyRingDrainsNothing) {
  FakeRing fake(128);
  Ring r = fake.ring();
  EXPECT_TRUE(r.empty());
  size_t n = 99;
  EXPECT_TRUE(drain_all(r, &n).empty());
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(fake.tail(), 0u);
}

TEST(PerfRingTest, ReadsRecordsInOrderAndReleasesSpace) {
  FakeRing fake(128);
  auto a = sample_rec(0xa), b = sample_rec(0xb, 4), c = sample_rec(0xc);
  fake.write(a);
  fake.write(b);
  fake.write(c);
  Ring r = fake.ring();
  EXPECT_FALSE(r.empty());
  size_t n = 0;
  auto seen = drain_all(r, &n);
  EXPECT_EQ(n, 3u);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].bytes, a);
  EXPECT_EQ(seen[1].bytes, b);
  EXPECT_EQ(seen[2].bytes, c);
  EXPECT_EQ(fake.tail(), fake.head());
  EXPECT_TRUE(r.empty());
  EXPECT_TRUE(drain_all(r).empty());
}

TEST(PerfRingTest, RecordWrappingTheEndIsCopiedWhole) {
  FakeRing fake(128);
  fake.start_at(96);  // 32 bytes to the end; the record is 48
  RecordBuilder b(PERF_RECORD_SAMPLE);
  b.u64(0x401000).u64(3).u64(PERF_CONTEXT_USER).u64(0x401000).u64(0x402000);
  auto rec = b.build();
  ASSERT_EQ(rec.size(), 48u);
  fake.write(rec);
  Ring r = fake.ring();
  std::vector<uint8_t> got;
  Sample s;
  bool decoded = false;
  r.drain([&](const perf_event_header&, std::span<const uint8_t> span) {
    got.assign(span.begin(), span.end());
    // The copy is aligned, so even the callchain decodes in place.
    decoded = decode_sample(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, span, s);
  });
  EXPECT_EQ(got, rec);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(s.ip, 0x401000u);
  ASSERT_EQ(s.callchain.size(), 3u);
  EXPECT_EQ(s.callchain[2], 0x402000u);
  EXPECT_EQ(fake.tail(), 96u + 48);
}

TEST(PerfRingTest, RecordEndingExactlyAtTheEndIsNotCopied) {
  FakeRing fake(64);
  fake.start_at(48);
  auto rec = sample_rec(0x1, 2);
  fake.write(rec);
  Ring r = fake.ring();
  auto seen = drain_all(r);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].bytes, rec);
}

TEST(PerfRingTest, HeaderStraddlingTheEnd) {
  // Kernel records are 8-byte aligned so their headers never straddle, but a
  // reader must not depend on it: start 4 bytes before the end.
  FakeRing fake(128);
  fake.start_at(124);
  auto rec = sample_rec(0xabc, 3);
  fake.write(rec);
  fake.write(sample_rec(0xdef));
  Ring r = fake.ring();
  auto seen = drain_all(r);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].bytes, rec);
  EXPECT_EQ(seen[1].bytes, sample_rec(0xdef));
}

TEST(PerfRingTest, LostRecordsAreCountedAndPassedOn) {
  FakeRing fake(256);
  fake.write(sample_rec(1));
  fake.write(RecordBuilder(PERF_RECORD_LOST).u64(5).u64(17).build());
  fake.write(sample_rec(2));
  fake.write(RecordBuilder(PERF_RECORD_LOST).u64(5).u64(3).build());
  Ring r = fake.ring();
  auto seen = drain_all(r);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[1].type, PERF_RECORD_LOST);
  EXPECT_EQ(r.lost(), 20u);
  // A later drain keeps adding.
  fake.write(RecordBuilder(PERF_RECORD_LOST).u64(5).u64(1).build());
  drain_all(r);
  EXPECT_EQ(r.lost(), 21u);
}

TEST(PerfRingTest, CorruptHeaderResynchronisesAtHead) {
  FakeRing fake(128);
  fake.write(sample_rec(1));
  auto bad = sample_rec(2);
  testing::set_size(bad, 4);  // smaller than a header
  fake.write(bad);
  fake.write(sample_rec(3));
  Ring r = fake.ring();
  auto seen = drain_all(r);
  ASSERT_EQ(seen.size(), 1u);  // the good record before the damage
  EXPECT_EQ(seen[0].bytes, sample_rec(1));
  EXPECT_EQ(fake.tail(), fake.head());
  // Records written afterwards are read normally.
  fake.write(sample_rec(4));
  seen = drain_all(r);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].bytes, sample_rec(4));
}

TEST(PerfRingTest, SizeBeyondHeadResynchronises) {
  FakeRing fake(128);
  auto bad = sample_rec(2);
  testing::set_size(bad, 64);  // claims bytes that were never published
  fake.write(bad);
  Ring r = fake.ring();
  EXPECT_TRUE(drain_all(r).empty());
  EXPECT_EQ(fake.tail(), fake.head());
}

// Found by tests/fuzz/perf_ring_fuzz.cpp (timeout): a head more than the
// data area ahead of the tail was read lap after lap, the same records handed
// out again and again (2.6 GB worth out of a 16-byte area in the fuzzer's
// input). Such a ring is out of step, as is a tail beyond head.
TEST(PerfRingTest, HeadMoreThanOneRingAheadResynchronises) {
  for (uint64_t gap : {uint64_t{129}, uint64_t{4096}, uint64_t{1} << 16}) {
    FakeRing fake(128);
    for (int i = 0; i < 8; ++i) fake.write(sample_rec(static_cast<uint64_t>(i)));
    fake.set_head(fake.tail() + gap);
    Ring r = fake.ring();
    size_t n = 99;
    EXPECT_TRUE(drain_all(r, &n).empty()) << gap;
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(fake.tail(), fake.head());
  }
}

TEST(PerfRingTest, FullRingIsReadWhole) {
  FakeRing fake(128);
  for (int i = 0; i < 8; ++i) fake.write(sample_rec(static_cast<uint64_t>(i)));  // 8 x 16 bytes
  Ring r = fake.ring();
  EXPECT_EQ(drain_all(r).size(), 8u);
  EXPECT_EQ(fake.tail(), fake.head());
}

TEST(PerfRingTest, TailBeyondHeadResynchronises) {
  FakeRing fake(128);
  fake.write(sample_rec(1));
  fake.set_tail(fake.head() + 64);
  Ring r = fake.ring();
  EXPECT_TRUE(drain_all(r).empty());
  EXPECT_EQ(fake.tail(), fake.head());
  fake.write(sample_rec(2));
  auto seen = drain_all(r);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].bytes, sample_rec(2));
}

TEST(PerfRingTest, ManyLapsOfMixedSizes) {
  // Sizes 16..56 bytes in a 128-byte ring: records wrap at every offset the
  // kernel can produce, many times over.
  FakeRing fake(128);
  Ring r = fake.ring();
  uint64_t next_write = 0, next_read = 0;
  for (int round = 0; round < 500; ++round) {
    uint64_t free = 128 - (fake.head() - fake.tail());
    for (;;) {
      size_t words = 2 + next_write % 6;
      if (words * 8 > free) break;
      fake.write(sample_rec(next_write++, words));
      free -= words * 8;
      if (round % 3 == 0) break;  // vary how many records a drain sees
    }
    r.drain([&](const perf_event_header&, std::span<const uint8_t> rec) {
      ASSERT_EQ(rec.size(), (2 + next_read % 6) * 8);
      uint64_t ip;
      std::memcpy(&ip, rec.data() + 8, sizeof ip);
      ASSERT_EQ(ip, next_read);
      ++next_read;
    });
  }
  EXPECT_EQ(next_read, next_write);
  EXPECT_GT(next_read, 1000u);
  EXPECT_EQ(fake.tail(), fake.head());
}

TEST(PerfRingTest, MovedFromRingIsEmpty) {
  FakeRing fake(64);
  fake.write(sample_rec(1));
  Ring a = fake.ring();
  Ring b = std::move(a);
  EXPECT_TRUE(drain_all(a).empty());  // NOLINT(bugprone-use-after-move): defined state
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(drain_all(b).size(), 1u);
  Ring c = fake.ring();
  c = std::move(b);
  fake.write(sample_rec(2));
  EXPECT_EQ(drain_all(c).size(), 1u);
}

// A reader under a flood gets back to its loop after max_records, and at
// once when told to stop; what it did not read stays, in order, for the
// next drain.
TEST(PerfRingTest, DrainIsBoundedAndStopsWhenAsked) {
  FakeRing fake(4096);
  for (uint64_t ip = 1; ip <= 10; ++ip) fake.write(sample_rec(ip));
  Ring r = fake.ring();
  std::vector<uint64_t> ips;
  auto collect = [&](const perf_event_header&, std::span<const uint8_t> rec) {
    uint64_t ip;
    std::memcpy(&ip, rec.data() + sizeof(perf_event_header), sizeof ip);
    ips.push_back(ip);
  };
  EXPECT_EQ(r.drain(collect, 3), 3u);
  EXPECT_EQ(ips, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_FALSE(r.empty());

  // stop() is asked before each record: true after two more, then no more.
  size_t asked = 0;
  EXPECT_EQ(r.drain(collect, SIZE_MAX, [&] { return ++asked > 2; }), 2u);
  EXPECT_EQ(ips, (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(r.drain(collect, SIZE_MAX, [] { return true; }), 0u);

  EXPECT_EQ(r.drain(collect), 5u);
  EXPECT_EQ(ips, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(fake.tail(), fake.head());
}

}  // namespace
}  // namespace tracekit::perf
