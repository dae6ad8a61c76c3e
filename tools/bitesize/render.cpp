#include "bitesize/render.hpp"

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

std::string bitesize_histogram(const std::vector<double>& edges_kb,
                               const std::vector<uint64_t>& counts) {
  const uint64_t most = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "            %-15s: %-8s %s\n", "Kbytes", "I/O", "Distribution");
  out += line;
  for (size_t i = 0; i < counts.size(); ++i) {
    char lo[32], hi[32];
    if (i == 0)
      std::snprintf(lo, sizeof lo, "%10s", "");
    else
      std::snprintf(lo, sizeof lo, "%10.1f", edges_kb[i - 1]);
    if (i < edges_kb.size())
      std::snprintf(hi, sizeof hi, "%-10.1f", edges_kb[i] - 0.1);
    else
      std::snprintf(hi, sizeof hi, "%-10s", "");
    std::snprintf(line, sizeof line, "   %s -> %s: %-8llu |%-38s|\n", lo, hi,
                  static_cast<unsigned long long>(counts[i]), bar(counts[i], most).c_str());
    out += line;
  }
  return out;
}

}  // namespace tracekit::output
