// How this works: each distinct stack is stored once, as a record in an
// arena of 64 KiB chunks: a header word (id << 32 | length), then the frames.
// Chunks are never reallocated, so records never move (frames() spans stay
// valid) and the arena's peak is its size, not the twice-plus a growing
// vector would briefly need. slots_ indexes the records: a power-of-two array
// probed linearly from the hash's home slot, kept at most two-thirds full so
// probe runs stay short. A slot holds the full 64-bit hash and a pointer to
// the record, so interning a stack that is already there costs one hash, one
// slot read and one frame comparison against a record whose header shares
// the frames' cache line. Growing re-places slots by their stored hashes.
//
// The hash takes two frames per 64x64->128-bit multiply and folds the
// product's halves together (the wyhash / rapidhash construction, with our
// own constants), in four independent chains over 8-frame blocks so the
// multiplies overlap. The last block is the stack's last 8 frames, even if
// that re-reads some: one loop exit to mispredict instead of three (block,
// pair, odd frame) on stacks whose length varies from event to event. The
// length seeds the hash, so a stack and its prefix ([a,b], [a,b,c]) differ.
#include "aggregate/stack_table.hpp"

#include <algorithm>
#include <limits>

namespace tracekit::aggregate {
namespace {

// Odd constants whose top 16 bits are neither all zeros nor all ones: no
// canonical x86-64 or arm64 address equals them, so xoring a frame with one
// never feeds the multiply a zero (which would erase the hash so far).
constexpr uint64_t kSeed = 0x9e3779b97f4a7c15;
constexpr uint64_t kK0 = 0xd6e8feb86659fd93;
constexpr uint64_t kK1 = 0x8ebc6af09c88c6e3;
constexpr uint64_t kK2 = 0x589965cc75374cc3;
constexpr uint64_t kK3 = 0x1d8e4e27c47d124f;
constexpr uint64_t kLane1 = 0x4f1bbcdcbfa53e0b;
constexpr uint64_t kLane2 = 0x2d358dccaa6c78a5;
constexpr uint64_t kLane3 = 0x6a09e667f3bcc909;

constexpr size_t kInitialSlots = 64;
constexpr size_t kChunkWords = 8192;
// Stacks this long get a chunk of their own rather than abandoning the
// current chunk's tail (perf stacks are at most a few hundred frames).
constexpr size_t kOwnChunkWords = kChunkWords / 4;

inline uint64_t fold_mul(uint64_t a, uint64_t b) {
  const unsigned __int128 r = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

uint64_t hash_frames(std::span<const uint64_t> frames) {
  const uint64_t* p = frames.data();
  const size_t n = frames.size();
  uint64_t a = kSeed ^ n, b = kLane1, c = kLane2, d = kLane3;
  auto block = [&](const uint64_t* q) {
    a = fold_mul(q[0] ^ kK0, q[1] ^ a);
    b = fold_mul(q[2] ^ kK1, q[3] ^ b);
    c = fold_mul(q[4] ^ kK2, q[5] ^ c);
    d = fold_mul(q[6] ^ kK3, q[7] ^ d);
  };
  if (n > 8) {
    for (size_t i = 0; i + 8 < n; i += 8) block(p + i);
    block(p + n - 8);
  } else if (n >= 4) {
    a = fold_mul(p[0] ^ kK0, p[1] ^ a);
    b = fold_mul(p[2] ^ kK1, p[3] ^ b);
    c = fold_mul(p[n - 4] ^ kK2, p[n - 3] ^ c);
    d = fold_mul(p[n - 2] ^ kK3, p[n - 1] ^ d);
  } else if (n > 0) {
    a = fold_mul(p[0] ^ kK0, p[n - 1] ^ a);
    b = fold_mul(p[n / 2] ^ kK1, b);
  }
  return fold_mul(fold_mul(a ^ c, b ^ d) ^ kK2, n ^ kK3);
}

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

StackId StackTable::intern(std::span<const uint64_t> frames) {
  const uint64_t h = hash_frames(frames);
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  for (;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.record == nullptr) break;
    if (s.hash != h) continue;
    const uint64_t header = s.record[0];
    if (static_cast<uint32_t>(header) == frames.size() &&
        std::equal(frames.begin(), frames.end(), s.record + 1)) {
      return static_cast<StackId>(header >> 32);
    }
  }

  if (records_.size() >= capacity_ || frames.size() > std::numeric_limits<uint32_t>::max()) {
    ++lost_;
    return kStackLost;
  }
  if (over_load(records_.size(), slots_.size())) {
    grow();
    i = first_empty(slots_, h);
  }
  const auto id = static_cast<StackId>(records_.size());
  const uint64_t* record = store(frames, id);
  records_.push_back(record);
  slots_[i] = Slot{h, record};
  return id;
}

const uint64_t* StackTable::store(std::span<const uint64_t> frames, StackId id) {
  const size_t words = 1 + frames.size();
  uint64_t* record;
  if (words <= free_words_) {
    record = free_;
    free_ += words;
    free_words_ -= words;
  } else if (words >= kOwnChunkWords) {
    chunks_.push_back(std::make_unique_for_overwrite<uint64_t[]>(words));
    record = chunks_.back().get();
  } else {
    chunks_.push_back(std::make_unique_for_overwrite<uint64_t[]>(kChunkWords));
    record = chunks_.back().get();
    free_ = record + words;
    free_words_ = kChunkWords - words;
  }
  record[0] = static_cast<uint64_t>(id) << 32 | frames.size();
  std::copy(frames.begin(), frames.end(), record + 1);
  return record;
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
