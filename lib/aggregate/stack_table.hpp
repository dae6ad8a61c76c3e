// Stack interning: every distinct stack (a sequence of addresses, leaf
// first) is stored once in an arena and named by a 32-bit id. The table is
// open-addressed with the stack's hash precomputed, so interning a stack that
// is already there costs one hash and one comparison in the common case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "aggregate/arena.hpp"

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

  // intern() of a stack the caller has already stored as a record: a header
  // word whose low 32 bits are the length, then the frames. A new stack is
  // stored as that record itself, not copied: the caller keeps it, unchanged
  // but for the header's high 32 bits (set here to the id), as long as this
  // table. Sets the header's id in every case (kStackLost: lost).
  StackId adopt(uint64_t* record);

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
  // The id of frames (hash h) if stored, else the slot to store it in.
  struct Found {
    StackId id;
    size_t slot;
  };
  Found find(std::span<const uint64_t> frames, uint64_t h) const;
  // Whether a new stack can be stored (else counted in lost_).
  bool room(size_t n);
  StackId insert(uint64_t* record, uint64_t h, size_t slot);
  void grow();

  size_t capacity_;
  uint64_t lost_ = 0;
  std::vector<Slot> slots_;               // power-of-two size, linear probing
  std::vector<const uint64_t*> records_;  // indexed by id
  Arena arena_;                           // the records intern() stores
};

}  // namespace tracekit::aggregate
