// Counts keyed by small fixed-size keys: (pid, comm id, kernel stack id, user
// stack id). The values are event counts (profile, stackcount) or summed
// microseconds (offcputime).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "aggregate/stack_table.hpp"

namespace tracekit::aggregate {

struct StackKey {
  uint32_t pid = 0;   // tgid, or 0 when the tool does not key by process
  uint32_t comm = 0;  // id from a StringTable
  StackId kernel = kNoStack;
  StackId user = kNoStack;
  friend bool operator==(const StackKey&, const StackKey&) = default;
};

class CountTable {
 public:
  // capacity: the most distinct keys kept (profile --hash-storage-size).
  explicit CountTable(size_t capacity);

  // Adds value to key's total. A new key when the table holds capacity keys
  // already is not stored: returns false and counts it in dropped().
  bool add(const StackKey& key, uint64_t value = 1);

  // fn(const StackKey&, uint64_t total) for every key, in the order the keys
  // were first added (so reports that sort stably keep ties in that order).
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (uint32_t pos : order_) fn(slots_[pos].key, slots_[pos].total);
  }

  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }
  bool full() const { return order_.size() >= capacity_; }
  // Additions refused because the table was full.
  uint64_t dropped() const { return dropped_; }

 private:
  // Key and total live in the slot itself, so adding to a known key touches
  // one 32-byte slot (never split across cache lines).
  struct alignas(32) Slot {
    StackKey key;
    uint64_t total;
    uint64_t hash;  // the key's hash with the top bit set; 0: empty slot
  };
  void grow();

  size_t capacity_;
  uint64_t dropped_ = 0;
  std::vector<Slot> slots_;      // power-of-two size, linear probing
  std::vector<uint32_t> order_;  // slot of each key, in first-seen order
};

}  // namespace tracekit::aggregate
