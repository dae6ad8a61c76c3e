#include "offcputime/pairing.hpp"

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

// What sort() finds: the events still held from the pass before are in
// order, and each ring's events arrive in time order (nearly always), so the
// held events are a few runs in time order, one after the other. It merges
// adjacent runs pairwise (stable: of equal times, the earlier run's first),
// log2(runs) linear passes, where a stable sort took log2(events). Many
// short runs (rings out of order) go to the stable sort.
void TimeOrder::sort() {
  const auto first = pending_.begin() + static_cast<ptrdiff_t>(head_);
  const auto earlier = [](const SchedEvent& a, const SchedEvent& b) { return a.time < b.time; };
  constexpr size_t kMaxRuns = 64;
  runs_.clear();
  runs_.push_back(head_);
  for (size_t i = head_ + 1; i < pending_.size(); ++i) {
    if (pending_[i].time >= pending_[i - 1].time) continue;
    if (runs_.size() == kMaxRuns) {
      std::stable_sort(first, pending_.end(), earlier);
      return;
    }
    runs_.push_back(i);
  }
  runs_.push_back(pending_.size());
  // runs_: the starts of the runs, then the end.
  while (runs_.size() > 2) {
    size_t kept = 0;
    size_t r = 0;
    for (; r + 2 < runs_.size(); r += 2) {
      const auto at = [this](size_t k) {
        return pending_.begin() + static_cast<ptrdiff_t>(runs_[k]);
      };
      std::inplace_merge(at(r), at(r + 1), at(r + 2), earlier);
      runs_[kept++] = runs_[r];
    }
    for (; r < runs_.size(); ++r) runs_[kept++] = runs_[r];
    runs_.resize(kept);
  }
}

void TimeOrder::forget(size_t n) {
  head_ = n;
  if (head_ == pending_.size()) {
    pending_.clear();
    head_ = 0;
  } else if (head_ * 2 >= pending_.size()) {
    pending_.erase(pending_.begin(), pending_.begin() + static_cast<ptrdiff_t>(head_));
    head_ = 0;
  }
}

}  // namespace tracekit::offcpu
