// Stack interning: every distinct stack (a sequence of addresses, leaf
// first) is stored once in an arena and named by a 32-bit id. The table is
// open-addressed with the stack's hash precomputed, so interning a stack that
// is already there costs one hash and one comparison in the common case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tracekit::aggregate {

using StackId = int32_t;
// Stack not collected for this key (e.g. user stack under -K).
inline constexpr StackId kNoStack = -1;
// Stack collected but not stored: the table held `capacity` stacks already
// (bcc's -ENOMEM from get_stackid). Reported as a missed stack.
inline constexpr StackId kStackLost = -2;

class StackTable {
 public:
  // capacity: the most distinct stacks kept (profile --stack-storage-size).
  explicit StackTable(size_t capacity);

  // The id of frames, storing them the first time they are seen. An empty
  // stack is a valid stack. kStackLost when the stack is new and the table is
  // full (counted in lost()).
  StackId intern(std::span<const uint64_t> frames);

  // The frames of id, leaf first. id must come from intern() of this table.
  std::span<const uint64_t> frames(StackId id) const;

  size_t size() const;
  size_t capacity() const { return capacity_; }
  // Stacks that could not be stored because the table was full.
  uint64_t lost() const { return lost_; }

 private:
  struct Entry {
    uint64_t offset;  // into arena_
    uint32_t length;
    uint32_t hash_hi;  // upper bits of the hash, to skip most full compares
  };
  void grow();

  size_t capacity_;
  uint64_t lost_ = 0;
  std::vector<uint64_t> arena_;
  std::vector<Entry> entries_;   // indexed by id
  std::vector<int32_t> slots_;   // open addressing: id or -1
};

}  // namespace tracekit::aggregate
