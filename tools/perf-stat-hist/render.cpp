#include "perf-stat-hist/render.hpp"

#include "output/bucket_histogram.hpp"

namespace tracekit::output {

std::string perf_stat_hist_histogram(const std::vector<int64_t>& edges,
                                     const std::vector<uint64_t>& counts) {
  std::vector<BucketRow> rows;
  for (size_t i = 0; i < counts.size(); ++i)
    rows.push_back({i == 0 ? "" : std::to_string(edges[i - 1]),
                    i < edges.size() ? std::to_string(edges[i] - 1) : "", counts[i]});
  return bucket_histogram("Range", "Count", rows);
}

}  // namespace tracekit::output
