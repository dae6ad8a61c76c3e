// Records held back in memory, in arrival order, while what reading them
// needs is not there yet: the kernel symbol table, which a tool loads in the
// background for 50-150 ms after it starts (symbols/kallsyms.hpp), while
// the traced program already runs. A reader that waited for the table would
// leave the kernel's buffers to fill and drop events; one that copies what
// arrives into a Backlog empties them, and reads the backlog once the
// table is there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace tracekit {

class Backlog {
 public:
  // What a reader may hold back: a second of a fast stream of stacks.
  static constexpr size_t kDefaultMaxBytes = 64u << 20;

  explicit Backlog(size_t max_bytes = kDefaultMaxBytes) : max_(max_bytes) {}

  // Copies bytes, with tag (a CPU, say), to the end. False, holding
  // nothing, when that would pass max_bytes: the caller must then read it
  // now, after replaying what is held.
  bool hold(uint64_t tag, std::span<const uint8_t> bytes);
  // Calls fn(tag, bytes) for every record held, oldest first, then forgets
  // them all. Returns how many there were.
  size_t replay(const std::function<void(uint64_t, std::span<const uint8_t>)>& fn);

  bool empty() const { return entries_.empty(); }
  size_t bytes() const { return data_.size(); }

 private:
  struct Entry {
    uint64_t tag;
    size_t offset, size;
  };
  size_t max_;
  std::vector<uint8_t> data_;
  std::vector<Entry> entries_;
};

}  // namespace tracekit
