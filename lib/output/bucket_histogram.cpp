#include "output/bucket_histogram.hpp"

#include <algorithm>
#include <cstdio>

namespace tracekit::output {

namespace {

constexpr uint64_t kBarWidth = 38;

// perf-tools' star(): as many '#' as it takes to reach width * n / most.
std::string bar(uint64_t n, uint64_t most) {
  if (most == 0) return "";
  const auto len =
      static_cast<size_t>((static_cast<unsigned __int128>(n) * kBarWidth + most - 1) / most);
  return std::string(len, '#');
}

}  // namespace

std::string bucket_histogram(std::string_view range_title, std::string_view count_title,
                             const std::vector<BucketRow>& rows) {
  uint64_t most = 0;
  for (const auto& r : rows) most = std::max(most, r.count);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "            %-15.*s: %-8.*s %s\n",
                static_cast<int>(range_title.size()), range_title.data(),
                static_cast<int>(count_title.size()), count_title.data(), "Distribution");
  out += line;
  for (const auto& r : rows) {
    std::snprintf(line, sizeof line, "   %10s -> %-10s: %-8llu |%-38s|\n", r.from.c_str(),
                  r.to.c_str(), static_cast<unsigned long long>(r.count),
                  bar(r.count, most).c_str());
    out += line;
  }
  return out;
}

}  // namespace tracekit::output
