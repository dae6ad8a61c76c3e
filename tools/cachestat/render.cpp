#include "cachestat/render.hpp"

#include <cstdio>

namespace tracekit::output {

void cachestat_columns(std::ostream& out, bool timestamp, bool debug) {
  char line[128];
  if (timestamp) {
    std::snprintf(line, sizeof line, "%-8s ", "TIME");
    out << line;
  }
  std::snprintf(line, sizeof line, "%8s %8s %8s %8s %12s %10s", "HITS", "MISSES", "DIRTIES",
                "RATIO", "BUFFERS_MB", "CACHE_MB");
  out << line << (debug ? "  DEBUG" : "") << "\n";
}

void cachestat_row(std::ostream& out, const std::string& time, const cachestat::Stats& s,
                   const cachestat::Memory& m, const cachestat::Calls* calls) {
  char line[256];
  if (!time.empty()) out << time << " ";
  std::snprintf(line, sizeof line, "%8llu %8llu %8llu %7.1f%% %12.0f %10.0f",
                static_cast<unsigned long long>(s.hits), static_cast<unsigned long long>(s.misses),
                static_cast<unsigned long long>(s.dirties), s.ratio, m.buffers_mb, m.cached_mb);
  out << line;
  if (calls) {
    std::snprintf(line, sizeof line, "  (%llu %llu %llu %llu)",
                  static_cast<unsigned long long>(calls->accessed),
                  static_cast<unsigned long long>(calls->buffer_dirty),
                  static_cast<unsigned long long>(calls->added),
                  static_cast<unsigned long long>(calls->dirtied));
    out << line;
  }
  out << "\n";
}

}  // namespace tracekit::output
