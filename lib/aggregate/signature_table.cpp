// How this works: two open-addressed tables of (hash, record pointer) slots,
// at most two-thirds full, over records in one arena.
//
// quick_ is keyed by hash(): the pid, the name, both stacks' lengths and six
// frames of each (the leaf end's six). Computing it reads the first words of
// each stack; the exact compare that follows reads the event's frames once,
// beside the record's. Hashing every frame first, as this table
// did before, read them twice and cost about as much as the compare. quick_
// holds at most one slot per quick hash: a record, or kShared once a second
// signature with that quick hash arrived (stacks that differ only in frames
// the quick hash does not read). Then both, and every later one, live in
// shared_, keyed by the full hash (every byte), where lookups compare as
// before. So a lookup is one compare in either case, whatever the stacks:
// no run of signatures with one quick hash is ever probed through.
//
// A record's compare: the first words (pid, name length, name), then the
// frames, which follow in the same record. The stack records inside a record
// are what StackCounts lets its StackTable adopt, so a new stack's frames
// are stored once.
#include "aggregate/signature_table.hpp"

#include <algorithm>
#include <cstring>

#include "aggregate/hash.hpp"

// The lookups are compiled twice (Isa): for processors with AVX2, whose
// 256-bit registers make the compare half the instructions (+7-9% events/s
// in aggregate_bench), and for any x86-64. The table picks one when it is
// made, so one binary runs on old hosts too.
#if defined(__x86_64__)
#define TRACEKIT_AVX2 1
#define TRACEKIT_TARGET_AVX2 [[gnu::target("avx2")]]
#else
#define TRACEKIT_AVX2 0
#define TRACEKIT_TARGET_AVX2
#endif

namespace tracekit::aggregate {
namespace {

constexpr size_t kInitialSlots = 64;

inline bool over_load(size_t stored, size_t slots) { return (stored + 1) * 3 > slots * 2; }

inline size_t name_words(size_t n) { return (n + 7) / 8; }

// Eight words at a time as two 256-bit vectors (the last eight re-read if
// the length is not a multiple of eight), without an early exit: one loop
// exit to mispredict on stacks whose length varies, and no call. Stacks are
// a few dozen frames, and a mismatch after an equal hash is rare. The
// functions that inline this are compiled twice (Isa): with AVX2 each
// vector is one register, one load and one xor; without, the compiler splits
// it into two 128-bit halves.
[[gnu::always_inline]] inline bool same_stack(const uint64_t* record,
                                              std::span<const uint64_t> frames) {
  constexpr size_t W = 4;  // words in a vector
  using V = uint64_t __attribute__((vector_size(W * 8)));
  const size_t n = frames.size();
  if (static_cast<uint32_t>(record[0]) != n) return false;
  const uint64_t* a = record + 1;
  const uint64_t* b = frames.data();
  V diff = {};
  auto compare = [a, b, &diff](size_t i) {  // no vector crosses a call (its ABI needs AVX)
    V x, y;
    std::memcpy(&x, a + i, sizeof x);
    std::memcpy(&y, b + i, sizeof y);
    diff |= x ^ y;
  };
  if (n >= W) {
    if (n >= 2 * W) {
      for (size_t i = 0; i + 2 * W < n; i += 2 * W) {
        compare(i);
        compare(i + W);
      }
      compare(n - 2 * W);
    } else {
      compare(0);
    }
    compare(n - W);
    return ((diff[0] | diff[1]) | (diff[2] | diff[3])) == 0;
  }
  if (n == 0) return true;
  return ((a[0] ^ b[0]) | (a[n / 2] ^ b[n / 2]) | (a[n - 1] ^ b[n - 1])) == 0;
}

// The name stored at p (n bytes, zero padded) is name.
[[gnu::always_inline]] inline bool same_name(const uint64_t* p, std::string_view name) {
  const auto* stored = reinterpret_cast<const char*>(p);
  const size_t n = name.size();
  if (n > 16) return std::memcmp(stored, name.data(), n) == 0;
  uint64_t a0, a1, b0, b1;
  hash::short_words(stored, n, a0, a1);
  hash::short_words(name.data(), n, b0, b1);
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

// The record r holds s; its key index, or kAbsent.
[[gnu::always_inline]] inline uint32_t match_record(const uint64_t* r, const Signature& s) {
  if (static_cast<uint32_t>(r[0]) != s.pid || r[1] != s.comm.size() || !same_name(r + 2, s.comm))
    return SignatureTable::kAbsent;
  const uint64_t* k = r + 2 + name_words(s.comm.size());
  if (!same_stack(k, s.kernel) || !same_stack(k + 1 + s.kernel.size(), s.user))
    return SignatureTable::kAbsent;
  return static_cast<uint32_t>(r[0] >> 32);
}

// The signature a record holds.
Signature signature_of(const uint64_t* r) {
  Signature s;
  s.pid = static_cast<uint32_t>(r[0]);
  s.comm = std::string_view(reinterpret_cast<const char*>(r + 2), r[1]);
  const uint64_t* k = r + 2 + name_words(r[1]);
  s.kernel = std::span<const uint64_t>(k + 1, static_cast<uint32_t>(k[0]));
  const uint64_t* u = k + 1 + s.kernel.size();
  s.user = std::span<const uint64_t>(u + 1, static_cast<uint32_t>(u[0]));
  return s;
}

uint64_t shared_word = 0;

}  // namespace

const uint64_t* const SignatureTable::kShared = &shared_word;

SignatureTable::Slots::Slots() : slots(kInitialSlots, Slot{0, nullptr}) {}

SignatureTable::Slot* SignatureTable::Slots::home(uint64_t h) {
  const size_t mask = slots.size() - 1;
  size_t i = h & mask;
  while (slots[i].record != nullptr && slots[i].hash != h) i = (i + 1) & mask;
  return &slots[i];
}

void SignatureTable::Slots::add(uint64_t h, const uint64_t* record) {
  if (over_load(size, slots.size())) {
    std::vector<Slot> bigger(slots.size() * 2, Slot{0, nullptr});
    const size_t mask = bigger.size() - 1;
    for (const Slot& s : slots) {
      if (s.record == nullptr) continue;
      size_t i = s.hash & mask;
      while (bigger[i].record != nullptr) i = (i + 1) & mask;
      bigger[i] = s;
    }
    slots.swap(bigger);
  }
  const size_t mask = slots.size() - 1;
  size_t i = h & mask;
  while (slots[i].record != nullptr) i = (i + 1) & mask;
  slots[i] = Slot{h, record};
  ++size;
}

bool SignatureTable::has_avx2() {
#if TRACEKIT_AVX2
  __builtin_cpu_init();  // may run before the library's constructors
  return __builtin_cpu_supports("avx2");
#else
  return false;
#endif
}

SignatureTable::SignatureTable(FullHash full, Isa isa)
    : full_(full), avx2_(isa == Isa::kBest && has_avx2()) {
  find_ = avx2_ ? &find_avx2 : &find_baseline;
}

namespace {
TRACEKIT_TARGET_AVX2 uint32_t match_avx2(const uint64_t* record, const Signature& s) {
  return match_record(record, s);
}
uint32_t match_baseline(const uint64_t* record, const Signature& s) {
  return match_record(record, s);
}
}  // namespace

uint32_t SignatureTable::match(const uint64_t* record, const Signature& s) {
  static const bool avx2 = has_avx2();
  return avx2 ? match_avx2(record, s) : match_baseline(record, s);
}

uint64_t SignatureTable::full_hash(const Signature& s) {
  using hash::fold_mul;
  const uint64_t k = hash::frames(s.kernel), u = hash::frames(s.user);
  const uint64_t c = hash::bytes(s.comm);
  return fold_mul(fold_mul(k ^ hash::kK0, u ^ hash::kK1) ^ c, s.pid ^ hash::kK3);
}

template <bool kAvx2>
[[gnu::always_inline]] inline uint32_t SignatureTable::find_in(const Signature& s,
                                                               uint64_t h) const {
  const size_t mask = quick_.slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = quick_.slots[i];
    if (slot.record == nullptr) return kAbsent;
    if (slot.hash != h) continue;
    if (slot.record == kShared) return kAvx2 ? find_shared_avx2(s) : find_shared_baseline(s);
    return match_record(slot.record, s);
  }
}

TRACEKIT_TARGET_AVX2 uint32_t SignatureTable::find_avx2(const SignatureTable& t, const Signature& s,
                                                        uint64_t h) {
  return t.find_in<true>(s, h);
}

uint32_t SignatureTable::find_baseline(const SignatureTable& t, const Signature& s, uint64_t h) {
  return t.find_in<false>(s, h);
}

TRACEKIT_TARGET_AVX2 uint32_t SignatureTable::find_shared_avx2(const Signature& s) const {
  return find_shared(s);
}

uint32_t SignatureTable::find_shared_baseline(const Signature& s) const { return find_shared(s); }

[[gnu::always_inline]] inline uint32_t SignatureTable::find_shared(const Signature& s) const {
  const uint64_t h = full_(s);
  const size_t mask = shared_.slots.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = shared_.slots[i];
    if (slot.record == nullptr) return kAbsent;
    if (slot.hash != h) continue;
    const uint32_t key = match_record(slot.record, s);
    if (key != kAbsent) return key;
  }
}

SignatureTable::Staged SignatureTable::stage(const Signature& s) {
  const size_t nw = name_words(s.comm.size());
  Staged st;
  st.words = 2 + nw + 1 + s.kernel.size() + 1 + s.user.size();
  uint64_t* r = st.record = arena_.allocate(st.words);
  r[0] = s.pid;
  r[1] = s.comm.size();
  if (nw > 0) {
    r[2 + nw - 1] = 0;
    std::memcpy(r + 2, s.comm.data(), s.comm.size());
  }
  st.kernel = r + 2 + nw;
  st.kernel[0] = s.kernel.size();
  std::copy(s.kernel.begin(), s.kernel.end(), st.kernel + 1);
  st.user = st.kernel + 1 + s.kernel.size();
  st.user[0] = s.user.size();
  std::copy(s.user.begin(), s.user.end(), st.user + 1);
  return st;
}

void SignatureTable::insert(const Staged& st, uint64_t h, uint32_t key) {
  st.record[0] |= uint64_t{key} << 32;
  ++size_;
  Slot* slot = quick_.home(h);
  if (slot->record == nullptr) {
    quick_.add(h, st.record);
    return;
  }
  if (slot->record != kShared) {  // the quick hash's second signature
    const uint64_t* first = slot->record;
    slot->record = kShared;
    shared_.add(full_(signature_of(first)), first);
  }
  shared_.add(full_(signature_of(st.record)), st.record);
}

}  // namespace tracekit::aggregate
