// perf/ring.hpp Ring::drain over a fake ring: the data area, data_tail and
// data_head all come from the input, as from a kernel (or a bug) that
// published them. Input: tail (u64), head - tail (u32), then the data area,
// cut to a power of two (at least 8 bytes). Every record handed out must lie
// in the data area or the ring's copy of a wrapped one and be as long as its
// header says; a second drain finds nothing.
#include <linux/perf_event.h>

#include "fuzz.hpp"
#include "perf/ring.hpp"
#include "perf/sample.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(perf_ring) {
  fuzz::Input in(data, size);
  auto tail = in.take<uint64_t>();
  auto ahead = in.take<uint32_t>();
  tail = std::min(tail, ~uint64_t{0} - ahead);  // the counters never wrap (2^64 bytes)
  auto bytes = in.rest();
  size_t data_size = 8;
  while (data_size * 2 <= bytes.size()) data_size *= 2;
  std::vector<uint64_t> area(data_size / 8);  // 8-byte aligned, as mmap'ed memory is
  std::memcpy(area.data(), bytes.data(), std::min(bytes.size(), data_size));
  auto* base = reinterpret_cast<const uint8_t*>(area.data());

  perf_event_mmap_page control{};
  control.data_tail = tail;
  control.data_head = tail + ahead;
  auto ring = perf::Ring::over(&control, base, data_size);
  uint64_t total = 0;
  size_t n = ring.drain([&](const perf_event_header& h, std::span<const uint8_t> rec) {
    FUZZ_CHECK(rec.size() == h.size && h.size >= sizeof h);
    FUZZ_CHECK(rec.size() <= data_size);
    total += rec.size();
    // What a tool does with a record: decode it by its type.
    perf::Sample s;
    (void)perf::decode_sample(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN, rec, s);
    perf::Comm c;
    (void)perf::decode_comm(rec, c);
    uint64_t sum = 0;
    for (uint8_t b : rec) sum += b;  // every byte readable
    (void)sum;
  });
  FUZZ_CHECK(total <= ahead);
  FUZZ_CHECK(control.data_tail == tail + ahead);  // read up to head, or resynchronised there
  FUZZ_CHECK(n == 0 || total > 0);
  FUZZ_CHECK(ring.empty());
  FUZZ_CHECK(ring.drain([](const perf_event_header&, std::span<const uint8_t>) {}) == 0);
}
