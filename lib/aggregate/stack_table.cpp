// How this works: each distinct stack is stored once, as a record in an
// arena (arena.hpp): a header word (id << 32 | length), then the frames.
// Records never move (frames() spans stay valid) and the arena's peak is its
// size, not the twice-plus a growing vector would briefly need. adopt()
// takes a record the caller stored (the signature table's, see
// signature_table.hpp) instead of copying it. slots_ indexes the records: a
// power-of-two array probed linearly from the hash's home slot, kept at most
// two-thirds full so probe runs stay short. A slot holds the full 64-bit hash
// and a pointer to the record, so interning a stack that is already there
// costs one hash, one slot read and one frame comparison against a record
// whose header shares the frames' cache line. Growing re-places slots by
// their stored hashes. The hash is hash::frames (hash.hpp).
#include "aggregate/stack_table.hpp"

#include <algorithm>
#include <limits>

#include "aggregate/hash.hpp"

namespace tracekit::aggregate {
namespace {

constexpr size_t kInitialSlots = 64;

// Growing before an insert would push the load past 2/3.
inline bool over_load(size_t stored, size_t slots) { return (stored + 1) * 3 > slots * 2; }

template <class Slots>
size_t first_empty(const Slots& slots, uint64_t hash) {
  const size_t mask = slots.size() - 1;
  size_t i = hash & mask;
  while (slots[i].record != nullptr) i = (i + 1) & mask;
  return i;
}

}  // namespace

StackTable::StackTable(size_t capacity)
    : capacity_(std::min<size_t>(capacity, std::numeric_limits<StackId>::max())),
      slots_(kInitialSlots, Slot{0, nullptr}) {}

StackTable::Found StackTable::find(std::span<const uint64_t> frames, uint64_t h) const {
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.record == nullptr) return {kStackLost, i};
    if (s.hash != h) continue;
    const uint64_t header = s.record[0];
    if (static_cast<uint32_t>(header) == frames.size() &&
        std::equal(frames.begin(), frames.end(), s.record + 1)) {
      return {static_cast<StackId>(header >> 32), i};
    }
  }
}

bool StackTable::room(size_t n) {
  if (records_.size() < capacity_ && n <= std::numeric_limits<uint32_t>::max()) return true;
  ++lost_;
  return false;
}

StackId StackTable::insert(uint64_t* record, uint64_t h, size_t slot) {
  if (over_load(records_.size(), slots_.size())) {
    grow();
    slot = first_empty(slots_, h);
  }
  const auto id = static_cast<StackId>(records_.size());
  record[0] = static_cast<uint64_t>(id) << 32 | static_cast<uint32_t>(record[0]);
  records_.push_back(record);
  slots_[slot] = Slot{h, record};
  return id;
}

StackId StackTable::intern(std::span<const uint64_t> frames) {
  const uint64_t h = hash::frames(frames);
  const Found f = find(frames, h);
  if (f.id >= 0) return f.id;
  if (!room(frames.size())) return kStackLost;
  uint64_t* record = arena_.allocate(1 + frames.size());
  record[0] = frames.size();
  std::copy(frames.begin(), frames.end(), record + 1);
  return insert(record, h, f.slot);
}

StackId StackTable::adopt(uint64_t* record) {
  const std::span<const uint64_t> frames(record + 1, static_cast<uint32_t>(record[0]));
  const uint64_t h = hash::frames(frames);
  Found f = find(frames, h);
  if (f.id < 0) f.id = room(frames.size()) ? insert(record, h, f.slot) : kStackLost;
  record[0] = static_cast<uint64_t>(static_cast<uint32_t>(f.id)) << 32 | frames.size();
  return f.id;
}

std::span<const uint64_t> StackTable::frames(StackId id) const {
  if (id < 0 || static_cast<size_t>(id) >= records_.size()) return {};
  const uint64_t* record = records_[id];
  return {record + 1, static_cast<uint32_t>(record[0])};
}

size_t StackTable::size() const { return records_.size(); }

void StackTable::grow() {
  std::vector<Slot> bigger(slots_.size() * 2, Slot{0, nullptr});
  for (const Slot& s : slots_) {
    if (s.record != nullptr) bigger[first_empty(bigger, s.hash)] = s;
  }
  slots_.swap(bigger);
}

}  // namespace tracekit::aggregate
