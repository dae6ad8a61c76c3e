#include "bitesize/render.hpp"

#include <cstdio>

#include "output/bucket_histogram.hpp"

namespace tracekit::output {

namespace {

std::string kbytes(double kb) {
  char s[32];
  std::snprintf(s, sizeof s, "%.1f", kb);
  return s;
}

}  // namespace

std::string bitesize_histogram(const std::vector<double>& edges_kb,
                               const std::vector<uint64_t>& counts) {
  std::vector<BucketRow> rows;
  for (size_t i = 0; i < counts.size(); ++i)
    rows.push_back({i == 0 ? "" : kbytes(edges_kb[i - 1]),
                    i < edges_kb.size() ? kbytes(edges_kb[i] - 0.1) : "", counts[i]});
  return bucket_histogram("Kbytes", "I/O", rows);
}

}  // namespace tracekit::output
