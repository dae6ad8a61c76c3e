// The front of StackCounts: each event signature (pid, process name, kernel
// frames, user frames) seen before, mapped to its key's index in the
// CountTable. A repeat event then costs a hash of a few of its frames, one
// slot and one exact compare of its record, instead of interning the name
// and both stacks and then looking the key up (five random memory accesses).
// New signatures go through the tables behind it and are added here once
// their key is known.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "aggregate/arena.hpp"
#include "aggregate/hash.hpp"

namespace tracekit::aggregate {

struct Signature {
  uint32_t pid = 0;
  std::string_view comm;
  std::span<const uint64_t> kernel;  // empty: none
  std::span<const uint64_t> user;
};

class SignatureTable {
 public:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  using FullHash = uint64_t (*)(const Signature&);

  // The compare's instructions: AVX2's where the processor has them, or the
  // baseline's (any x86-64; any processor elsewhere). Tests force the
  // baseline to run it on any machine.
  enum class Isa { kBest, kBaseline };

  // full: the hash of a whole signature, used where two signatures share a
  // quick hash (tests pass a constant to force full-hash collisions too).
  explicit SignatureTable(FullHash full = &full_hash, Isa isa = Isa::kBest);
  // Whether this table's lookups use AVX2.
  bool avx2() const { return avx2_; }
  static bool has_avx2();

  // The quick hash find() and insert() take: pid, name, both stacks'
  // lengths and six frames of each (the leaf end's), so that a repeat
  // costs about one read of its frames (the compare's). Signatures that
  // share it are told apart by full_hash. Inline, so that add()
  // computes it beside its own work: three A/B runs of 8-12 rounds, ring
  // +12%, +6%, +5%; pool -7%, +0.4%, +0.8%.
  static uint64_t hash(const Signature& s);
  // Every byte of the signature.
  static uint64_t full_hash(const Signature& s);
  // The key index stored for s (of quick hash h), or kAbsent.
  uint32_t find(const Signature& s, uint64_t h) const { return find_(*this, s, h); }
  // The exact compare find() makes once it has a record (the best Isa's):
  // the key index in record (0 in a staged one) if it holds s, else kAbsent.
  // Public for aggregate_bench's FloorCompare, which finds records by an
  // oracle.
  static uint32_t match(const uint64_t* record, const Signature& s);

  // A new signature's record, written to the arena but not yet in the table:
  // its two stack records (a header word with the length, then the frames;
  // the format StackTable::adopt takes) can be adopted by a StackTable
  // before insert() or discard().
  struct Staged {
    uint64_t* record = nullptr;
    size_t words = 0;
    uint64_t* kernel = nullptr;  // the kernel stack's record
    uint64_t* user = nullptr;
  };
  Staged stage(const Signature& s);
  // Adds the staged signature (quick hash h), with its key index.
  void insert(const Staged& st, uint64_t h, uint32_t key);
  // Drops the staged signature, whose record nothing adopted.
  void discard(const Staged& st) { arena_.release_last(st.record, st.words); }

  size_t size() const { return size_; }
  // Signatures stored by full hash, their quick hash being shared.
  size_t shared() const { return shared_.size; }

 private:
  // A record: pid | key index << 32, the name's length, the name (zero
  // padded to whole words), the kernel stack record, the user stack record.
  struct Slot {
    uint64_t hash;
    const uint64_t* record;  // nullptr: empty slot; kShared: see shared_
  };
  // Open addressing, power-of-two size, linear probing, at most 2/3 full.
  struct Slots {
    size_t size = 0;
    std::vector<Slot> slots;
    Slots();
    Slot* home(uint64_t h);  // h's slot, or the empty one it would take
    void add(uint64_t h, const uint64_t* record);
  };
  static const uint64_t* const kShared;

  // find() for each Isa, one body compiled twice.
  template <bool kAvx2>
  uint32_t find_in(const Signature& s, uint64_t h) const;
  static uint32_t find_avx2(const SignatureTable& t, const Signature& s, uint64_t h);
  static uint32_t find_baseline(const SignatureTable& t, const Signature& s, uint64_t h);
  uint32_t find_shared(const Signature& s) const;
  uint32_t find_shared_avx2(const Signature& s) const;
  uint32_t find_shared_baseline(const Signature& s) const;

  FullHash full_;
  bool avx2_;
  uint32_t (*find_)(const SignatureTable&, const Signature&, uint64_t);
  size_t size_ = 0;
  Slots quick_;   // one slot per quick hash: a record, or kShared
  Slots shared_;  // by full hash: the records of every shared quick hash
  Arena arena_;
};

namespace signature_hash {

// A stack's length and six of its frames, as a sum of three independent
// products, k0-k2 being the side's own constants: one multiply deep, so the
// slot's load waits on the frames' loads and little else. The six are the
// leaf end's (stacks of six or fewer: both ends, the leaf's caller, the
// quarters and the middle, some read twice): the first line or two of the
// stack, the lines a ring read reaches first, so the slot and the record can
// be loaded while the rest of the event is still on its way for the compare.
// Sampling both ends and the middle instead had the hash wait for the
// event's last line. Measured on recorded stacks (cpu-clock samples,
// sched_switch and raw_syscalls stacks of a build), the leaf end tells
// signatures apart as well or better: stacks that share it also differ in
// length.
inline uint64_t sample(std::span<const uint64_t> f, uint64_t k0, uint64_t k1, uint64_t k2) {
  using hash::fold_mul;
  const size_t n = f.size();
  if (n == 0) return k2;
  const uint64_t* p = f.data();
  if (n >= 6) {
    const uint64_t a = fold_mul(p[0] ^ k0, p[1] ^ hash::kSeed ^ n);
    const uint64_t b = fold_mul(p[2] ^ k1, p[3] ^ hash::kLane1);
    const uint64_t c = fold_mul(p[4] ^ k2, p[5] ^ hash::kLane2);
    return a + b + c;
  }
  const uint64_t a = fold_mul(p[0] ^ k0, p[n - 1] ^ hash::kSeed ^ n);
  const uint64_t b = fold_mul(p[n / 4] ^ k1, p[n / 2] ^ hash::kLane1);
  const uint64_t c = fold_mul(p[n > 1] ^ k2, p[n - 1 - n / 4] ^ hash::kLane2);
  return a + b + c;
}

// The user side's constants (the kernel side's are hash::kK0-kK2), chosen
// like hash.hpp's.
constexpr uint64_t kUser0 = 0xa0761d6478bd642f;
constexpr uint64_t kUser1 = 0xe7037ed1a0b428db;
constexpr uint64_t kUser2 = 0xc2b2ae3d27d4eb4f;

}  // namespace signature_hash

inline uint64_t SignatureTable::hash(const Signature& s) {
  using hash::fold_mul;
  using signature_hash::sample, signature_hash::kUser0, signature_hash::kUser1,
      signature_hash::kUser2;
  // Eight independent products summed (three per stack, the name's, the
  // pid's): no multiply waits for another.
  return sample(s.kernel, hash::kK0, hash::kK1, hash::kK2) +
         sample(s.user, kUser0, kUser1, kUser2) + hash::bytes(s.comm) +
         fold_mul(s.pid ^ hash::kLane3, hash::kK3);
}

}  // namespace tracekit::aggregate
