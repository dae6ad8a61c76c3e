// A new signature: its record is staged in the signature table's arena, and
// its stacks are interned by adopting the stack records inside it, so a
// stack seen for the first time is stored once (in the signature record)
// rather than twice. The record is kept if the stack table adopted either
// stack, and entered in the signature table if nothing was lost or dropped.
//
// The queue: queue() copies an event into words_, hashes the copy (in cache
// now) and starts loading the signature slot its hash picks. flush() then
// goes over the batch twice: first it starts loading the record of every
// event whose home slot holds its hash (by then the slot has arrived), then
// it does what add() does, event by event in order, on records that are
// mostly in cache by then. So a batch waits for its slots and records about
// once, where add() waits for each event's in turn. The loads are only
// hints: the second pass looks every event up from scratch, so an event
// whose signature an earlier event of the batch added, or a table that grew
// meanwhile, give add()'s exact result.
#include "aggregate/stack_counts.hpp"

#include <algorithm>
#include <cstring>

namespace tracekit::aggregate {
namespace {

inline size_t name_words(size_t n) { return (n + 7) / 8; }

}  // namespace

bool StackCounts::add_new(const Signature& s, uint64_t h, uint64_t value) {
  const SignatureTable::Staged st = signatures.stage(s);
  const size_t stored = stacks.size();
  const StackId kernel = s.kernel.empty() ? kNoStack : stacks.adopt(st.kernel);
  const StackId user = s.user.empty() ? kNoStack : stacks.adopt(st.user);
  const uint32_t key = counts.index(StackKey{s.pid, comms.intern(s.comm), kernel, user});
  if (key != CountTable::kDropped) counts.add_at(key, value);
  if (key != CountTable::kDropped && kernel != kStackLost && user != kStackLost)
    signatures.insert(st, h, key);
  else if (stacks.size() == stored)
    signatures.discard(st);
  return key != CountTable::kDropped;
}

Signature StackCounts::signature(const Pending& p) const {
  const uint64_t* w = words_.data() + p.at;
  const uint64_t* k = w + name_words(p.comm_bytes);
  return Signature{p.pid, std::string_view(reinterpret_cast<const char*>(w), p.comm_bytes),
                   std::span<const uint64_t>(k, p.kernel_frames),
                   std::span<const uint64_t>(k + p.kernel_frames, p.user_frames)};
}

void StackCounts::queue(uint32_t pid, std::string_view comm,
                        std::optional<std::span<const uint64_t>> kernel,
                        std::optional<std::span<const uint64_t>> user, uint64_t value) {
  const std::span<const uint64_t> k = kernel.value_or(std::span<const uint64_t>());
  const std::span<const uint64_t> u = user.value_or(std::span<const uint64_t>());
  const size_t nw = name_words(comm.size());
  Pending p{0, value, pid, static_cast<uint32_t>(words_.size()),
            static_cast<uint32_t>(comm.size()), static_cast<uint32_t>(k.size()),
            static_cast<uint32_t>(u.size())};
  words_.resize(words_.size() + nw + k.size() + u.size());
  uint64_t* w = words_.data() + p.at;
  if (nw > 0) {
    w[nw - 1] = 0;
    std::memcpy(w, comm.data(), comm.size());
  }
  std::copy(k.begin(), k.end(), w + nw);
  std::copy(u.begin(), u.end(), w + nw + k.size());
  p.hash = SignatureTable::hash(signature(p));
  signatures.prefetch_slot(p.hash);
  pending_.push_back(p);
  if (pending_.size() >= batch_) flush();
}

void StackCounts::add(std::span<const Event> events) {
  constexpr size_t kMax = 64;
  uint64_t h[kMax];
  while (!events.empty()) {
    const size_t n = std::min(events.size(), kMax);
    for (size_t i = 0; i < n; ++i) {
      h[i] = SignatureTable::hash(events[i].sig);
      signatures.prefetch_slot(h[i]);
    }
    for (size_t i = 0; i < n; ++i) {
      signatures.prefetch_record(h[i], events[i].sig);
    }
    for (size_t i = 0; i < n; ++i) {
      const Signature& s = events[i].sig;
      const uint32_t key = signatures.find(s, h[i]);
      if (key == SignatureTable::kAbsent)
        add_new(s, h[i], events[i].value);
      else
        counts.add_at(key, events[i].value);
    }
    events = events.subspan(n);
  }
}

void StackCounts::flush() {
  for (const Pending& p : pending_) {
    // The words of a record that matches: pid and key, name length, name,
    // and a length header before each stack's frames.
    signatures.prefetch_record(p.hash, signature(p));
  }
  for (const Pending& p : pending_) {
    const Signature s = signature(p);
    const uint32_t key = signatures.find(s, p.hash);
    if (key == SignatureTable::kAbsent)
      add_new(s, p.hash, p.value);
    else
      counts.add_at(key, p.value);
  }
  pending_.clear();
  words_.clear();
}

}  // namespace tracekit::aggregate
