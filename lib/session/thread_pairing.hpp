// Pairing a system call's entry with its exit, per thread: a thread is in
// one system call at a time, so the entry kept for a thread is the one its
// next exit completes. Used by SyscallStrings (CallPairing) and killsnoop.
#pragma once

#include <optional>
#include <unordered_map>
#include <utility>

namespace tracekit::session {

// Entry: what an entry record leaves for its exit. Pure.
template <class Entry>
class ThreadPairing {
 public:
  // Keeps the thread's entry; a second entry before an exit replaces the
  // first (its exit was lost, or a probed wrapper called another).
  void entry(int tid, Entry e) { pending_.insert_or_assign(tid, std::move(e)); }
  // The thread's entry, taken; nullopt when it has none (the call began
  // before tracing, or its entry was filtered out or lost).
  std::optional<Entry> exit(int tid) {
    auto it = pending_.find(tid);
    if (it == pending_.end()) return std::nullopt;
    std::optional<Entry> e(std::move(it->second));
    pending_.erase(it);
    return e;
  }
  size_t pending() const { return pending_.size(); }

 private:
  std::unordered_map<int, Entry> pending_;
};

}  // namespace tracekit::session
