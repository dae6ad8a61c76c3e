// Builds perf records byte by byte, as the kernel lays them out, so the
// decoders and the ring can be tested without perf_event_open.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace tracekit::perf::testing {

class RecordBuilder {
 public:
  RecordBuilder(uint32_t type, uint16_t misc = 0) : bytes_(sizeof(perf_event_header)) {
    perf_event_header h{type, misc, 0};
    std::memcpy(bytes_.data(), &h, sizeof h);
  }

  RecordBuilder& u32(uint32_t v) { return put(&v, sizeof v); }
  RecordBuilder& u64(uint64_t v) { return put(&v, sizeof v); }
  RecordBuilder& raw(const void* p, size_t n) { return put(p, n); }
  // s, its NUL, then zeros up to a multiple of 8 bytes (as COMM's name).
  RecordBuilder& padded_string(std::string_view s) {
    put(s.data(), s.size());
    bytes_.push_back(0);
    while (bytes_.size() % 8 != 0) bytes_.push_back(0);
    return *this;
  }

  // The record with header.size set to its length. vector storage comes from
  // operator new, so it is 8-byte aligned like a ring record.
  std::vector<uint8_t> build() const {
    std::vector<uint8_t> out = bytes_;
    uint16_t size = static_cast<uint16_t>(out.size());
    std::memcpy(out.data() + offsetof(perf_event_header, size), &size, sizeof size);
    return out;
  }

 private:
  RecordBuilder& put(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
    return *this;
  }
  std::vector<uint8_t> bytes_;
};

// Sets header.size of a built record (to make it lie about its length).
inline void set_size(std::vector<uint8_t>& rec, uint16_t size) {
  std::memcpy(rec.data() + offsetof(perf_event_header, size), &size, sizeof size);
}

}  // namespace tracekit::perf::testing
