#include "offcpu/pairing.hpp"

#include <algorithm>

namespace tracekit::offcpu {

std::optional<Period> Pairer::switch_in(uint32_t tid, uint64_t time) {
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
