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

// Without an early exit, so the compiler vectorizes it: stacks are a few
// dozen frames, and a mismatch after an equal full hash is rare.
inline bool same_stack(const uint64_t* record, std::span<const uint64_t> frames) {
  if (static_cast<uint32_t>(record[0]) != frames.size()) return false;
  uint64_t diff = 0;
  for (size_t i = 0; i < frames.size(); ++i) diff |= record[1 + i] ^ frames[i];
  return diff == 0;
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
    if (static_cast<uint32_t>(r[0]) != s.pid || r[1] != s.comm.size() ||
        (!s.comm.empty() && std::memcmp(r + 2, s.comm.data(), s.comm.size()) != 0)) {
      continue;
    }
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
