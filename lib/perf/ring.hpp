// The mmap'ed ring of one perf event: a control page followed by 2^n data
// pages. The kernel writes records and advances data_head; we read them and
// advance data_tail. A record may wrap the end of the data area; such a record
// is copied into a scratch buffer so callers always see contiguous bytes.
#pragma once

#include <linux/perf_event.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "util/result.hpp"

namespace tracekit::perf {

// The default stop predicate of Ring::drain: read on.
struct NeverStop {
  bool operator()() const { return false; }
};

class Ring {
 public:
  // Maps fd with data_pages pages of data (rounded up to a power of two).
  // Error: mmap's errno (EPERM usually means perf_event_mlock_kb is too low).
  static Result<Ring> map(int fd, size_t data_pages);

  // A ring over memory the caller owns and keeps alive (nothing is unmapped):
  // control holds data_head/data_tail, data is the data area. data_size must
  // be a power of two and data 8-byte aligned. For tests, which lay out a
  // fake ring in ordinary memory.
  static Ring over(perf_event_mmap_page* control, const uint8_t* data, uint64_t data_size);

  Ring(Ring&&) noexcept;
  Ring& operator=(Ring&&) noexcept;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring();

  // Calls fn(const perf_event_header&, std::span<const uint8_t> record) for
  // every record available now (the span covers the whole record, header
  // included, and is valid only during the call), then releases the space to
  // the kernel. PERF_RECORD_LOST records are counted into lost() and also
  // passed to fn. Returns how many records were read. A header the kernel
  // cannot have written (size below 8 or beyond head), or a head more than
  // the data area ahead of the tail (or behind it), means the ring is out of
  // step: everything available is dropped so the next drain starts in step.
  // At most max_records are read, and none once stop() returns true (it is
  // asked before each record): the rest stays for the next drain. A reader
  // under a flood of records thus gets back to its loop after a bounded
  // amount of work, and at once when it is told to stop (a signal handler
  // sets a flag that stop reads): a process starved by the sampling
  // interrupts gets little CPU, and must spend none of it reading before it
  // turns the events off.
  template <class Fn, class Stop = NeverStop>
  size_t drain(Fn&& fn, size_t max_records = SIZE_MAX, Stop&& stop = Stop{});

  bool empty() const;
  uint64_t lost() const { return lost_; }

 private:
  Ring() = default;
  uint64_t load_head() const;
  void store_tail(uint64_t tail);
  void note_lost(std::span<const uint8_t> record);

  void* base_ = nullptr;  // the control page
  size_t map_size_ = 0;   // 0 when the memory is not ours to unmap
  const uint8_t* data_ = nullptr;
  uint64_t data_size_ = 0;  // power of two
  uint64_t lost_ = 0;
  std::vector<uint8_t> scratch_;
};

template <class Fn, class Stop>
size_t Ring::drain(Fn&& fn, size_t max_records, Stop&& stop) {
  if (base_ == nullptr) return 0;
  const uint64_t mask = data_size_ - 1;
  const uint64_t head = load_head();
  // Only we write data_tail, so a plain read sees our last store.
  uint64_t tail = static_cast<perf_event_mmap_page*>(base_)->data_tail;
  size_t n = 0;
  // The kernel never gets more than the data area ahead of us (it counts
  // PERF_RECORD_LOST instead), and tail never passes head: either is a bogus
  // counter, and reading up to head would go round the ring lap after lap.
  if (head - tail > data_size_) tail = head;
  while (tail < head && n < max_records && !stop()) {
    const uint64_t off = tail & mask;
    perf_event_header hdr;
    if (off + sizeof hdr <= data_size_) {
      std::memcpy(&hdr, data_ + off, sizeof hdr);
    } else {  // the header itself straddles the end
      for (size_t i = 0; i < sizeof hdr; ++i)
        reinterpret_cast<uint8_t*>(&hdr)[i] = data_[(off + i) & mask];
    }
    if (hdr.size < sizeof hdr || hdr.size > head - tail || hdr.size > data_size_) {
      // The kernel only publishes whole records, so this is corruption (or a
      // bogus tail). Skipping one record is impossible without a valid size:
      // resynchronise at head instead of stalling on this record forever.
      tail = head;
      break;
    }
    std::span<const uint8_t> rec;
    if (off + hdr.size <= data_size_) {
      rec = {data_ + off, hdr.size};
    } else {
      scratch_.resize(hdr.size);
      const size_t first = data_size_ - off;
      std::copy(data_ + off, data_ + data_size_, scratch_.data());
      std::copy(data_, data_ + (hdr.size - first), scratch_.data() + first);
      rec = {scratch_.data(), hdr.size};
    }
    if (hdr.type == PERF_RECORD_LOST) note_lost(rec);
    fn(hdr, rec);
    tail += hdr.size;
    ++n;
  }
  store_tail(tail);
  return n;
}

}  // namespace tracekit::perf
