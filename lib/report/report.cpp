#include "report/report.hpp"

namespace tracekit::report {

Stack FrameTable::stack(std::vector<Frame> frames) {
  std::vector<Id> ids;
  ids.reserve(frames.size());
  for (Frame& f : frames) ids.push_back(add(std::move(f)));
  return stack(ids);
}

}  // namespace tracekit::report
