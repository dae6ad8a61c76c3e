// The tables a stack tool aggregates into: stacks interned once (kernel and
// user stacks share one table, like bcc's single stack_traces map), process
// names interned, and a total per (pid, comm, kernel stack, user stack).
// add() goes through a signature table first (signature_table.hpp), so an
// event seen before costs one lookup. queue() does the same work a batch at
// a time, so that the cache misses of a batch's events overlap.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "aggregate/count_table.hpp"
#include "aggregate/signature_table.hpp"
#include "aggregate/stack_table.hpp"
#include "aggregate/string_table.hpp"

namespace tracekit::aggregate {

struct StackCounts {
  // Events queue() holds before it adds them (flush()) by default.
  static constexpr size_t kBatch = 32;

  // batch: the events queue() holds (1 or more).
  StackCounts(size_t stack_capacity, size_t key_capacity, size_t batch = kBatch)
      : stacks(stack_capacity), counts(key_capacity), batch_(batch > 0 ? batch : 1) {
    pending_.reserve(batch_);
  }

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

  // add() of the same event, deferred: the event (name and frames) is copied,
  // so nothing it points to need outlive the call, and added with the events
  // queued before it once the batch is full or at flush(). The tables (and
  // so the report) include every queued event only after flush(): call it
  // before reading them. Totals, order, lost stacks and dropped keys are
  // those of add() one event at a time.
  void queue(uint32_t pid, std::string_view comm, std::optional<std::span<const uint64_t>> kernel,
             std::optional<std::span<const uint64_t>> user, uint64_t value);
  // Adds every queued event, in order.
  void flush();

  // add() of each event, in order, its misses overlapped: the frames and
  // names must stay valid during the call only.
  struct Event {
    Signature sig;  // empty spans: no stack
    uint64_t value;
  };
  void add(std::span<const Event> events);
  size_t queued() const { return pending_.size(); }

  StackTable stacks;
  CountTable counts;
  StringTable comms;
  SignatureTable signatures;

 private:
  bool add_new(const Signature& s, uint64_t h, uint64_t value);

  // A queued event: its signature's parts are at words_[at...]: the name
  // (zero padded to whole words), then the kernel frames, then the user
  // frames.
  struct Pending {
    uint64_t hash;
    uint64_t value;
    uint32_t pid;
    uint32_t at;
    uint32_t comm_bytes, kernel_frames, user_frames;
  };
  Signature signature(const Pending& p) const;

  size_t batch_;
  std::vector<Pending> pending_;
  std::vector<uint64_t> words_;
};

}  // namespace tracekit::aggregate
