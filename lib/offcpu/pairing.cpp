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
  open_[tid] = start;
  return p;
}

std::optional<Period> Pairer::ignore(uint32_t tid) {
  auto p = woken_period(tid);
  open_.erase(tid);
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

void TimeOrder::sort() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const SchedEvent& a, const SchedEvent& b) { return a.time < b.time; });
}

}  // namespace tracekit::offcpu
