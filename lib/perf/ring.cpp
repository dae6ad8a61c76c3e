// How this works: perf_event's mmap is one control page (perf_event_mmap_page)
// followed by a power-of-two data area. The kernel is the producer: it writes
// records, then publishes them by advancing data_head. We are the consumer: we
// read data_head with acquire ordering (so the record bytes are visible before
// we look at them), parse up to it, then store data_tail with release ordering
// (so our reads finish before the kernel may overwrite that space). Both
// counters only grow; positions in the data area are counter & (size - 1).
#include "perf/ring.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <string>
#include <utility>

#include "perf/sample.hpp"

namespace tracekit::perf {

namespace {

uint64_t round_up_pow2(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

}  // namespace

Result<Ring> Ring::map(int fd, size_t data_pages) {
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t pages = round_up_pow2(data_pages == 0 ? 1 : data_pages);
  const size_t size = (1 + pages) * page;
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    const int err = errno;
    return Error{err, "cannot mmap perf ring", std::to_string(pages) + " data pages",
                 err == EPERM ? "run as root or raise /proc/sys/kernel/perf_event_mlock_kb" : ""};
  }
  Ring r;
  r.base_ = base;
  r.map_size_ = size;
  auto* meta = static_cast<perf_event_mmap_page*>(base);
  // Kernels since 4.1 say where the data is; older ones put it one page in.
  if (meta->data_size != 0) {
    r.data_ = static_cast<const uint8_t*>(base) + meta->data_offset;
    r.data_size_ = meta->data_size;
  } else {
    r.data_ = static_cast<const uint8_t*>(base) + page;
    r.data_size_ = pages * page;
  }
  return r;
}

Ring Ring::over(perf_event_mmap_page* control, const uint8_t* data, uint64_t data_size) {
  assert(data_size != 0 && (data_size & (data_size - 1)) == 0);
  Ring r;
  r.base_ = control;
  r.data_ = data;
  r.data_size_ = data_size;
  return r;
}

Ring::Ring(Ring&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      map_size_(std::exchange(o.map_size_, 0)),
      data_(std::exchange(o.data_, nullptr)),
      data_size_(std::exchange(o.data_size_, 0)),
      lost_(std::exchange(o.lost_, 0)),
      scratch_(std::move(o.scratch_)) {}

Ring& Ring::operator=(Ring&& o) noexcept {
  if (this != &o) {
    Ring old(std::move(*this));  // unmapped when it goes out of scope
    base_ = std::exchange(o.base_, nullptr);
    map_size_ = std::exchange(o.map_size_, 0);
    data_ = std::exchange(o.data_, nullptr);
    data_size_ = std::exchange(o.data_size_, 0);
    lost_ = std::exchange(o.lost_, 0);
    scratch_ = std::move(o.scratch_);
  }
  return *this;
}

Ring::~Ring() {
  if (base_ != nullptr && map_size_ != 0) ::munmap(base_, map_size_);
}

bool Ring::empty() const {
  if (base_ == nullptr) return true;
  return load_head() == static_cast<const perf_event_mmap_page*>(base_)->data_tail;
}

uint64_t Ring::load_head() const {
  return __atomic_load_n(&static_cast<const perf_event_mmap_page*>(base_)->data_head,
                         __ATOMIC_ACQUIRE);
}

void Ring::store_tail(uint64_t tail) {
  __atomic_store_n(&static_cast<perf_event_mmap_page*>(base_)->data_tail, tail, __ATOMIC_RELEASE);
}

void Ring::note_lost(std::span<const uint8_t> record) {
  uint64_t n = 0;
  if (decode_lost(record, n)) lost_ += n;
}

}  // namespace tracekit::perf
