#include "offcpu/pairing.hpp"

#include <algorithm>

namespace tracekit::offcpu {

std::optional<Period> Pairer::woken_period(uint32_t tid) {
  auto w = woken_.find(tid);
  if (w == woken_.end()) return std::nullopt;
  uint64_t end = w->second;
  woken_.erase(w);
  auto it = open_.find(tid);
  if (it == open_.end() || end < it->second.time) return std::nullopt;
  Period p{tid, it->second, end};
  open_.erase(it);
  return p;
}

std::optional<Period> Pairer::switch_out(uint32_t tid, const Start& start) {
  auto p = woken_period(tid);
  if (!open_.insert_or_assign(tid, start).second) ++unended_;
  return p;
}

std::optional<Period> Pairer::ignore(uint32_t tid) {
  auto p = woken_period(tid);
  unended_ += open_.erase(tid);
  return p;
}

void Pairer::wakeup(uint32_t tid, uint64_t time) {
  if (open_.count(tid)) woken_.emplace(tid, time);  // (keeps the first)
}

std::optional<Period> Pairer::switch_in(uint32_t tid, uint64_t time) {
  woken_.erase(tid);
  auto it = open_.find(tid);
  if (it == open_.end()) return std::nullopt;
  Period p{tid, it->second, time};
  open_.erase(it);
  if (time < p.start.time) return std::nullopt;
  return p;
}

SwitchChains::Link SwitchChains::link(size_t cpu, uint32_t prev, uint32_t next, uint64_t time,
                                      bool records) {
  Cpu& c = cpus_[cpu];
  const uint32_t expected = c.last_next;
  const uint64_t since = c.last_time;
  c.last_next = next;
  c.last_time = time;
  Link l;
  if (expected == kUnknown) return l;
  if (prev != expected) {
    // Switches went missing between the last one shown and this one; the
    // switch-in of prev among them, unless prev is the idle task.
    if (prev == 0) return l;
    c.idle_exits = c.links = 0;
    if (expected == 0) c.idle_misses = true;
    if (!records) {
      ++missed_;
      l.missed_since = since;
      l.action = Action::kRestoreRecords;
    }
    return l;
  }
  if (!records || c.idle_misses) return l;
  if (prev == 0) ++c.idle_exits;
  if (c.idle_exits >= kProofIdleExits || ++c.links >= kProofLinks) l.action = Action::kDropRecords;
  return l;
}

void TimeOrder::sort() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const SchedEvent& a, const SchedEvent& b) { return a.time < b.time; });
}

}  // namespace tracekit::offcpu
