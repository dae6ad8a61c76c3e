// perf/sample.hpp: the decoders of records read from a perf ring. Input:
// sample_type (u64, little-endian), a flags byte (bit 0: place the record
// 4 bytes off 8-byte alignment), then one record, header included, which
// every decoder is tried on. Whatever a decoder returns points into the
// record: that is checked, and the record sits in a block of exactly its
// size, so a read past it is caught.
#include <linux/perf_event.h>

#include "fuzz.hpp"
#include "perf/sample.hpp"

using namespace tracekit;
using tracekit::fuzz::within;

TRACEKIT_FUZZ_TARGET(perf_record) {
  fuzz::Input in(data, size);
  auto sample_type = in.take<uint64_t>();
  bool misaligned = in.take<uint8_t>() & 1;
  auto rest = in.rest();
  // new[] blocks are 16-byte aligned; the record starts at 0 or 4 in one
  // that ends where the record does.
  const size_t pad = misaligned ? 4 : 0;
  auto* block = new uint8_t[pad + rest.size() + 1];
  std::memcpy(block + pad, rest.data(), rest.size());
  std::span<const uint8_t> rec(block + pad, rest.size());

  perf::Sample s;
  if (perf::decode_sample(sample_type, rec, s)) {
    FUZZ_CHECK(within(s.callchain, rec));
    FUZZ_CHECK(within(s.raw, rec));
    auto chains = perf::split_callchain(s.callchain);
    FUZZ_CHECK(within(chains.kernel, s.callchain));
    FUZZ_CHECK(within(chains.user, s.callchain));
    for (uint64_t f : chains.kernel) FUZZ_CHECK(f < static_cast<uint64_t>(-4095));
    for (uint64_t f : chains.user) FUZZ_CHECK(f < static_cast<uint64_t>(-4095));
    (void)perf::truncated(chains, 127);
  }
  // The callchain splitter over the record's bytes read as u64s.
  if (!misaligned && rest.size() >= 8) {
    std::span<const uint64_t> words(reinterpret_cast<const uint64_t*>(block), rest.size() / 8);
    auto chains = perf::split_callchain(words);
    FUZZ_CHECK(within(chains.kernel, words) && within(chains.user, words));
  }

  perf::Comm c;
  if (perf::decode_comm(rec, c)) {
    FUZZ_CHECK(within(c.comm, rec));
    FUZZ_CHECK(c.comm.find('\0') == std::string_view::npos);
  }
  perf::Task t;
  (void)perf::decode_task(rec, t);
  uint64_t lost = 0;
  (void)perf::decode_lost(rec, lost);
  perf::ContextSwitch cs;
  (void)perf::decode_context_switch(sample_type, rec, cs);
  for (bool two : {true, false}) {
    perf::Mmap2 m;
    if (two ? perf::decode_mmap2(rec, m) : perf::decode_mmap(rec, m)) {
      FUZZ_CHECK(within(m.filename, rec));
      FUZZ_CHECK(within(m.build_id, rec));
      FUZZ_CHECK(m.build_id.size() <= 20);
    }
  }
  perf::SampleId id;
  (void)perf::decode_sample_id(sample_type, rec, id);
  delete[] block;
}
