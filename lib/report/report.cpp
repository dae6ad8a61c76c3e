#include "report/report.hpp"

#include "symbols/stack_roots.hpp"

namespace tracekit::report {

Stack FrameTable::stack(std::vector<Frame> frames) {
  std::vector<Id> ids;
  ids.reserve(frames.size());
  for (Frame& f : frames) ids.push_back(add(std::move(f)));
  return stack(ids);
}

void trim_past_stack_roots(std::vector<Record>& records, const FrameTable& frames) {
  for (auto& r : records) {
    auto ids = frames.ids(r.user);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (symbols::is_stack_root(frames[ids[i]].name)) {
        r.user.size = static_cast<uint32_t>(i + 1);
        break;
      }
    }
  }
}

}  // namespace tracekit::report
