// The tables a stack tool aggregates into: stacks interned once (kernel and
// user stacks share one table, like bcc's single stack_traces map), process
// names interned, and a total per (pid, comm, kernel stack, user stack).
// add() goes through a signature table first (signature_table.hpp), so an
// event seen before costs one lookup.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "aggregate/count_table.hpp"
#include "aggregate/signature_table.hpp"
#include "aggregate/stack_table.hpp"
#include "aggregate/string_table.hpp"

namespace tracekit::aggregate {

struct StackCounts {
  StackCounts(size_t stack_capacity, size_t key_capacity)
      : stacks(stack_capacity), counts(key_capacity) {}

  // The id to key a stack side by: kNoStack when the side was not collected
  // (nullopt) or is empty (a kernel thread has no user stack, a sample in
  // user mode no kernel stack); else the interned id, or kStackLost.
  StackId side(std::optional<std::span<const uint64_t>> frames) {
    if (!frames || frames->empty()) return kNoStack;
    return stacks.intern(*frames);
  }

  // Adds value to the total of (pid, comm, kernel, user). False when the key
  // table was full (counted in counts.dropped()). The same totals, lost
  // stacks and dropped keys as counts.add() of the key made with comms and
  // side(); a signature is remembered only when its stacks were stored and
  // its key kept, so the signature table holds at most one entry per key.
  bool add(uint32_t pid, std::string_view comm, std::optional<std::span<const uint64_t>> kernel,
           std::optional<std::span<const uint64_t>> user, uint64_t value) {
    const Signature s{pid, comm, kernel.value_or(std::span<const uint64_t>()),
                      user.value_or(std::span<const uint64_t>())};
    const uint64_t h = SignatureTable::hash(s);
    const uint32_t key = signatures.find(s, h);
    if (key == SignatureTable::kAbsent) return add_new(s, h, value);
    counts.add_at(key, value);
    return true;
  }

  StackTable stacks;
  CountTable counts;
  StringTable comms;
  SignatureTable signatures;

 private:
  bool add_new(const Signature& s, uint64_t h, uint64_t value);
};

}  // namespace tracekit::aggregate
