#include "family/block/render.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>

#include "util/strings.hpp"

namespace tracekit::output {

namespace {

// Seconds with microseconds, as the kernel's trace file shows event times.
std::string seconds(uint64_t ns) {
  char t[40];
  uint64_t us = ns / 1000;
  std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
  return t;
}

constexpr int kBarWidth = 38;

}  // namespace

void io_header(std::ostream& out, bool start, bool end) {
  char buf[128];
  if (start) {
    std::snprintf(buf, sizeof buf, "%-15s ", "STARTs");
    out << buf;
  }
  if (end) {
    std::snprintf(buf, sizeof buf, "%-15s ", "ENDs");
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "%-12.12s %-6s %-4s %-8s %-12s %-6s %8s\n", "COMM", "PID", "TYPE",
                "DEV", "BLOCK", "BYTES", "LATms");
  out << buf;
}

void io_line(std::ostream& out, const IoLine& l, bool start, bool end) {
  char buf[192];
  if (start) {
    std::snprintf(buf, sizeof buf, "%-15s ", seconds(l.start_ns).c_str());
    out << buf;
  }
  if (end) {
    std::snprintf(buf, sizeof buf, "%-15s ", seconds(l.end_ns).c_str());
    out << buf;
  }
  // A process's name is anyone's: control characters print as '?'.
  std::string comm = printable(l.comm.substr(0, 12)), type(l.type), dev(l.dev);
  const double ms = l.end_ns >= l.start_ns ? (l.end_ns - l.start_ns) / 1e6 : 0.0;
  std::snprintf(buf, sizeof buf, "%-12.12s %-6d %-4s %-8s %-12" PRIu64 " %-6" PRIu64 " %8.2f\n",
                comm.c_str(), l.pid, type.c_str(), dev.c_str(), l.sector, l.bytes, ms);
  out << buf;
}

void latency_histogram(std::ostream& out, std::span<const uint64_t> buckets) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%8s .. %-8s: %-8s |%-38s|\n", ">=(ms)", "<(ms)", "I/O",
                "Distribution");
  out << buf;
  size_t last = 0;
  uint64_t max = 0;
  for (size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i]) {
      last = i;
      max = std::max(max, buckets[i]);
    }
  uint64_t from = 0, to = 1;
  for (size_t i = 0; i <= last; ++i) {
    const uint64_t n = i < buckets.size() ? buckets[i] : 0;
    // perf-tools' star(): as many '#' as it takes to reach width * n / max.
    const size_t bar = max ? static_cast<size_t>((kBarWidth * n + max - 1) / max) : 0;
    std::snprintf(buf, sizeof buf, "%8" PRIu64 " -> %-8" PRIu64 ": %-8" PRIu64 " |%-38s|\n", from,
                  to, n, std::string(bar, '#').c_str());
    out << buf;
    from = to;
    to *= 2;
  }
}

}  // namespace tracekit::output
