// How this works: as StackTable (stack_table.cpp), an open-addressed table
// of (full hash, record pointer) slots, at most two-thirds full, over records
// in an arena. A signature's hash combines hash::frames of each stack with
// the name's and the pid; a lookup compares the record's first words (pid,
// name length, name) and then the frames, which follow in the same record.
// The stack records inside a record are what StackCounts lets its
// StackTable adopt, so a new stack's frames are stored once.
#include "aggregate/signature_table.hpp"

#include <algorithm>
#include <cstring>

#include "aggregate/hash.hpp"

namespace tracekit::aggregate {
namespace {

constexpr size_t kInitialSlots = 64;

inline bool over_load(size_t stored, size_t slots) { return (stored + 1) * 3 > slots * 2; }

inline size_t name_words(size_t n) { return (n + 7) / 8; }

// Four words at a time as two 128-bit vectors (the last four re-read if the
// length is not a multiple of four), without an early exit: one loop exit to
// mispredict on stacks whose length varies, and no call. Stacks are a few
// dozen frames, and a mismatch after an equal full hash is rare.
inline bool same_stack(const uint64_t* record, std::span<const uint64_t> frames) {
  using V = uint64_t __attribute__((vector_size(16)));
  const size_t n = frames.size();
  if (static_cast<uint32_t>(record[0]) != n) return false;
  const uint64_t* a = record + 1;
  const uint64_t* b = frames.data();
  auto load = [](const uint64_t* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (n >= 4) {
    V diff = V{0, 0};
    for (size_t i = 0; i + 4 < n; i += 4)
      diff |= (load(a + i) ^ load(b + i)) | (load(a + i + 2) ^ load(b + i + 2));
    diff |= (load(a + n - 4) ^ load(b + n - 4)) | (load(a + n - 2) ^ load(b + n - 2));
    return (diff[0] | diff[1]) == 0;
  }
  if (n == 0) return true;
  return ((a[0] ^ b[0]) | (a[n / 2] ^ b[n / 2]) | (a[n - 1] ^ b[n - 1])) == 0;
}

// The name stored at p (n bytes, zero padded) is name.
inline bool same_name(const uint64_t* p, std::string_view name) {
  const auto* stored = reinterpret_cast<const char*>(p);
  const size_t n = name.size();
  if (n > 16) return std::memcmp(stored, name.data(), n) == 0;
  uint64_t a0, a1, b0, b1;
  hash::short_words(stored, n, a0, a1);
  hash::short_words(name.data(), n, b0, b1);
  return ((a0 ^ b0) | (a1 ^ b1)) == 0;
}

}  // namespace

SignatureTable::SignatureTable() : slots_(kInitialSlots, Slot{0, nullptr}) {}

uint64_t SignatureTable::hash(const Signature& s) {
  using hash::fold_mul;
  const uint64_t k = hash::frames(s.kernel), u = hash::frames(s.user);
  const uint64_t c = hash::bytes(s.comm);
  return fold_mul(fold_mul(k ^ hash::kK0, u ^ hash::kK1) ^ c, s.pid ^ hash::kK3);
}

uint32_t SignatureTable::find(const Signature& s, uint64_t h) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.record == nullptr) return kAbsent;
    if (slot.hash != h) continue;
    const uint64_t* r = slot.record;
    if (static_cast<uint32_t>(r[0]) != s.pid || r[1] != s.comm.size() || !same_name(r + 2, s.comm))
      continue;
    const uint64_t* k = r + 2 + name_words(s.comm.size());
    if (!same_stack(k, s.kernel)) continue;
    if (!same_stack(k + 1 + s.kernel.size(), s.user)) continue;
    return static_cast<uint32_t>(r[0] >> 32);
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
  if (over_load(size_, slots_.size())) grow();
  const size_t mask = slots_.size() - 1;
  size_t i = h & mask;
  while (slots_[i].record != nullptr) i = (i + 1) & mask;
  slots_[i] = Slot{h, st.record};
  ++size_;
}

void SignatureTable::grow() {
  std::vector<Slot> bigger(slots_.size() * 2, Slot{0, nullptr});
  const size_t mask = bigger.size() - 1;
  for (const Slot& s : slots_) {
    if (s.record == nullptr) continue;
    size_t i = s.hash & mask;
    while (bigger[i].record != nullptr) i = (i + 1) & mask;
    bigger[i] = s;
  }
  slots_.swap(bigger);
}

}  // namespace tracekit::aggregate
