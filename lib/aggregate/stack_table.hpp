// Stack interning: every distinct stack (a sequence of addresses, leaf
// first) is stored once in an arena and named by a 32-bit id. The table is
// open-addressed with the stack's hash precomputed, so interning a stack that
// is already there costs one hash and one comparison in the common case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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

  // The frames of id, leaf first. id must come from intern() of this table;
  // an id that names no stored stack (kNoStack, kStackLost) gives an empty
  // span. The span points into the table and stays valid as long as the
  // table does (stored frames never move).
  std::span<const uint64_t> frames(StackId id) const;

  size_t size() const;
  size_t capacity() const { return capacity_; }
  // Stacks that could not be stored because the table was full.
  uint64_t lost() const { return lost_; }

 private:
  // A stored stack is one record in the arena: a header word (id << 32 |
  // length) followed by the frames. A slot holds the stack's full hash and a
  // pointer to its record, so a lookup touches one slot and one record.
  struct Slot {
    uint64_t hash;
    const uint64_t* record;  // nullptr: empty slot
  };
  const uint64_t* store(std::span<const uint64_t> frames, StackId id);
  void grow();

  size_t capacity_;
  uint64_t lost_ = 0;
  std::vector<Slot> slots_;                          // power-of-two size, linear probing
  std::vector<const uint64_t*> records_;             // indexed by id
  std::vector<std::unique_ptr<uint64_t[]>> chunks_;  // the arena; never moves
  uint64_t* free_ = nullptr;                         // unused tail of the newest chunk
  size_t free_words_ = 0;
};

}  // namespace tracekit::aggregate
