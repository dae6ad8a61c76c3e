// How this works: an open-addressed table (power-of-two size, linear probing,
// at most two-thirds full) whose 32-byte slots hold the key, its total and
// its hash, so adding to a key already there reads and writes one slot. A
// key is only 16 bytes: its hash is two 64x64->128-bit multiplies, each
// product's halves folded together. order_ lists the slot of every key in
// first-seen order; it gives for_each that order and lets grow() re-place
// keys without scanning empty slots.
#include "aggregate/count_table.hpp"

#include <algorithm>
#include <limits>

namespace tracekit::aggregate {
namespace {

static_assert(sizeof(StackKey) == 16, "StackKey is hashed as two 64-bit words");

// Large odd constants: pids, comm ids and stack ids are small (or -1/-2), so
// a key half never equals one and the multiply never sees a zero.
constexpr uint64_t kMulA = 0x9e3779b97f4a7c15;
constexpr uint64_t kMulB = 0xd6e8feb86659fd93;
constexpr uint64_t kMulC = 0x8ebc6af09c88c6e3;
constexpr uint64_t kMulD = 0x589965cc75374cc3;
// Set in every stored hash, so 0 can mark an empty slot. Slot indexes come
// from the low bits and never reach this one.
constexpr uint64_t kUsed = uint64_t{1} << 63;

constexpr size_t kInitialSlots = 64;

inline uint64_t fold_mul(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// Two rounds: after one, a field that fills the high half of a word (the user
// stack id) barely reaches the low bits that pick the slot.
inline uint64_t hash_key(const StackKey& k) {
  // Built from the fields, not memcpy'd: the caller has usually just written
  // them as four 32-bit stores, which an 8-byte load could not forward from.
  const uint64_t a = k.pid | uint64_t{k.comm} << 32;
  const uint64_t b = static_cast<uint32_t>(k.kernel) | uint64_t{static_cast<uint32_t>(k.user)}
                                                           << 32;
  return fold_mul(fold_mul(a ^ kMulA, b ^ kMulB) ^ kMulC, kMulD) | kUsed;
}

inline bool over_load(size_t stored, size_t slots) { return (stored + 1) * 3 > slots * 2; }

template <class Slots>
size_t first_empty(const Slots& slots, uint64_t hash) {
  const size_t mask = slots.size() - 1;
  size_t i = hash & mask;
  while (slots[i].hash != 0) i = (i + 1) & mask;
  return i;
}

}  // namespace

CountTable::CountTable(size_t capacity)
    : capacity_(std::min<size_t>(capacity, std::numeric_limits<int32_t>::max())),
      slots_(kInitialSlots) {}

bool CountTable::add(const StackKey& key, uint64_t value) {
  const uint64_t h = hash_key(key);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.hash == 0) break;
    if (s.hash == h && s.key == key) {
      s.total += value;
      return true;
    }
  }

  if (full()) {
    ++dropped_;
    return false;
  }
  if (over_load(order_.size(), slots_.size())) {
    grow();
    i = first_empty(slots_, h);
  }
  order_.push_back(static_cast<uint32_t>(i));
  slots_[i] = Slot{key, value, h};
  return true;
}

void CountTable::grow() {
  std::vector<Slot> bigger(slots_.size() * 2);
  for (uint32_t& pos : order_) {
    const size_t i = first_empty(bigger, slots_[pos].hash);
    bigger[i] = slots_[pos];
    pos = static_cast<uint32_t>(i);
  }
  slots_.swap(bigger);
}

}  // namespace tracekit::aggregate
