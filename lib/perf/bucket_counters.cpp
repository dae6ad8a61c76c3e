#include "perf/bucket_counters.hpp"

#include "tracefs/filter.hpp"
#include "util/proc.hpp"

namespace tracekit::perf {

std::vector<std::string> bucket_filters(const std::string& field, const std::vector<int64_t>& edges,
                                        const std::string& also) {
  std::vector<std::string> filters;
  for (size_t i = 0; i <= edges.size(); ++i) {
    std::string f;
    if (i > 0) f = field + " >= " + std::to_string(edges[i - 1]);
    if (i < edges.size()) f += (f.empty() ? "" : " && ") + field + " < " + std::to_string(edges[i]);
    filters.push_back(tracefs::join_filters(f, also));
  }
  return filters;
}

Result<BucketCounters> BucketCounters::open(int event_id, const std::vector<std::string>& filters,
                                            std::optional<int> pid) {
  std::vector<int> tids;
  if (pid) {
    tids = threads_of(*pid);
    if (tids.empty()) return no_process_error(*pid);
  }
  std::vector<Counted> counted;
  for (const auto& f : filters) counted.push_back({event_id, f});
  auto c = Counters::open(counted, tids);
  if (!c) return c.error();
  if (auto s = c->enable(); !s) return s.error();
  return BucketCounters(std::move(*c));
}

void BucketCounters::stop() { stopped_ = counters_.take(); }

Result<std::vector<uint64_t>> BucketCounters::counts() {
  if (!stopped_) return counters_.take();
  auto c = std::move(*stopped_);
  stopped_.reset();
  return c;
}

}  // namespace tracekit::perf
