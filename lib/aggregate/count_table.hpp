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
  // index(): the key was not stored (the table is full).
  static constexpr uint32_t kDropped = UINT32_MAX;

  // capacity: the most distinct keys kept (profile --hash-storage-size).
  explicit CountTable(size_t capacity);

  // Adds value to key's total. A new key when the table holds capacity keys
  // already is not stored: returns false and counts it in dropped().
  bool add(const StackKey& key, uint64_t value = 1) {
    const uint32_t i = index(key);
    if (i == kDropped) return false;
    add_at(i, value);
    return true;
  }

  // The index of key (dense, from 0, in first-seen order), storing it with a
  // total of 0 if it is new; kDropped, counted in dropped(), when it is new
  // and the table is full.
  uint32_t index(const StackKey& key);
  // Adds value to the total of the key index() gave i.
  void add_at(uint32_t i, uint64_t value) { entries_[i].total += value; }

  // fn(const StackKey&, uint64_t total) for every key, in the order the keys
  // were first added (so reports that sort stably keep ties in that order).
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const Entry& e : entries_) fn(e.key, e.total);
  }

  size_t size() const { return entries_.size(); }
  size_t capacity() const { return capacity_; }
  bool full() const { return entries_.size() >= capacity_; }
  // Additions refused because the table was full.
  uint64_t dropped() const { return dropped_; }

 private:
  struct Entry {
    StackKey key;
    uint64_t total;
  };
  void grow();

  size_t capacity_;
  uint64_t dropped_ = 0;
  // Power-of-two size, linear probing: the key's hash's high 32 bits (tag)
  // << 32 | its index + 1; 0: empty.
  std::vector<uint64_t> slots_;
  std::vector<Entry> entries_;  // by index: first-seen order
};

}  // namespace tracekit::aggregate
