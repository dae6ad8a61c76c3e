// perf-stat-hist's histogram, as perf-tools' perf-stat-hist prints it: a
// "Range : Count Distribution" header, then one row per bucket, the first
// open below ("-> -1"), the last open above ("1048576 ->"), a bar of up to
// 38 '#' (output/bucket_histogram).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tracekit::output {

// The histogram of counts (one per bucket: edges.size() + 1 of them, below
// the first edge first) for these edges, ascending. Pure.
std::string perf_stat_hist_histogram(const std::vector<int64_t>& edges,
                                     const std::vector<uint64_t>& counts);

}  // namespace tracekit::output
