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

  // fn(const StackKey&, uint64_t total) for every key, in no defined order.
  template <class Fn>
  void for_each(Fn&& fn) const {
    for (const auto& e : entries_) fn(e.key, e.total);
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
  std::vector<Entry> entries_;
  std::vector<int32_t> slots_;  // open addressing: index into entries_ or -1
};

}  // namespace tracekit::aggregate
