#include "killsnoop/render.hpp"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "util/strings.hpp"

namespace tracekit::output {

namespace {

// perf-tools' TIMEs column: microseconds, as the kernel's trace file shows
// event times, left-aligned in 16.
void time_column(std::ostream& out, uint64_t ts_ns) {
  uint64_t us = ts_ns / 1000;
  char t[40], buf[48];
  std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
  std::snprintf(buf, sizeof buf, "%-16s ", t);
  out << buf;
}

}  // namespace

void kill_header(std::ostream& out, bool timestamps) {
  char buf[96];
  if (timestamps) {
    std::snprintf(buf, sizeof buf, "%-16s ", "TIMEs");
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "%-16.16s %-6s %-8s %-10s %4s\n", "COMM", "PID", "TPID", "SIGNAL",
                "RETURN");
  out << buf;
}

void kill_event(std::ostream& out, const KillEvent& e, bool timestamps) {
  if (timestamps) time_column(out, e.ts_ns);
  // The sender's name is anyone's: control characters print as '?'.
  std::string comm = printable(e.comm.substr(0, 16)), signal(e.signal);
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-16.16s %-6d %-8d %-10s %-4" PRId64 "\n", comm.c_str(), e.pid,
                e.tpid, signal.c_str(), e.ret);
  out << buf;
}

}  // namespace tracekit::output
