// How this works: the keys and their totals are a vector in first-seen order
// (for_each walks it; an index names a key for good, which the signature
// table keeps), indexed by an open-addressed table (power-of-two size, linear
// probing, at most two-thirds full) of 8-byte slots: the key's index and 32
// bits of its hash, so a probe compares keys only when those bits match. A
// key is only 16 bytes: its hash is two 64x64->128-bit multiplies, each
// product's halves folded together. Growing re-hashes the keys from the
// vector, without scanning empty slots.
#include "aggregate/count_table.hpp"

#include <algorithm>
#include <limits>

#include "aggregate/hash.hpp"

namespace tracekit::aggregate {
namespace {

using hash::fold_mul;

static_assert(sizeof(StackKey) == 16, "StackKey is hashed as two 64-bit words");

constexpr size_t kInitialSlots = 64;

// Two rounds: after one, a field that fills the high half of a word (the user
// stack id) barely reaches the low bits that pick the slot. The constants are
// large and odd: pids, comm ids and stack ids are small (or -1/-2), so a key
// half never equals one and the multiply never sees a zero.
inline uint64_t hash_key(const StackKey& k) {
  // Built from the fields, not memcpy'd: the caller has usually just written
  // them as four 32-bit stores, which an 8-byte load could not forward from.
  const uint64_t a = k.pid | uint64_t{k.comm} << 32;
  const uint64_t b = static_cast<uint32_t>(k.kernel) | uint64_t{static_cast<uint32_t>(k.user)}
                                                           << 32;
  return fold_mul(fold_mul(a ^ hash::kSeed, b ^ hash::kK0) ^ hash::kK1, hash::kK2);
}

inline uint64_t tag(uint64_t h) { return h & 0xffffffff00000000; }

inline bool over_load(size_t stored, size_t slots) { return (stored + 1) * 3 > slots * 2; }

size_t first_empty(const std::vector<uint64_t>& slots, uint64_t hash) {
  const size_t mask = slots.size() - 1;
  size_t i = hash & mask;
  while (slots[i] != 0) i = (i + 1) & mask;
  return i;
}

}  // namespace

CountTable::CountTable(size_t capacity)
    : capacity_(std::min<size_t>(capacity, std::numeric_limits<int32_t>::max())),
      slots_(kInitialSlots) {}

uint32_t CountTable::index(const StackKey& key) {
  const uint64_t h = hash_key(key);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const uint64_t s = slots_[i];
    if (s == 0) break;
    if (tag(s) != tag(h)) continue;
    const auto at = static_cast<uint32_t>(s) - 1;
    if (entries_[at].key == key) return at;
  }

  if (full()) {
    ++dropped_;
    return kDropped;
  }
  if (over_load(entries_.size(), slots_.size())) {
    grow();
    i = first_empty(slots_, h);
  }
  const auto at = static_cast<uint32_t>(entries_.size());
  entries_.push_back(Entry{key, 0});
  slots_[i] = tag(h) | (at + 1);
  return at;
}

void CountTable::grow() {
  std::vector<uint64_t> bigger(slots_.size() * 2);
  for (uint32_t at = 0; at < entries_.size(); ++at) {
    const uint64_t h = hash_key(entries_[at].key);
    bigger[first_empty(bigger, h)] = tag(h) | (at + 1);
  }
  slots_.swap(bigger);
}

}  // namespace tracekit::aggregate
