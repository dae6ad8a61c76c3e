#include "output/execsnoop.hpp"

#include <cinttypes>
#include <cstdio>

namespace tracekit::output {

void exec_header(std::ostream& out, bool timestamps) {
  char buf[64];
  if (timestamps) {
    std::snprintf(buf, sizeof buf, "%-16s ", "TIMEs");
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "%6s %6s %s\n", "PID", "PPID", "ARGS");
  out << buf;
}

void exec_event(std::ostream& out, const ExecEvent& e, bool timestamps) {
  char buf[64];
  if (timestamps) {
    // Microseconds, as the kernel's trace file shows event times.
    uint64_t us = e.ts_ns / 1000;
    char t[40];
    std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
    std::snprintf(buf, sizeof buf, "%-16s ", t);
    out << buf;
  }
  std::snprintf(buf, sizeof buf, "%6d %6d ", e.pid, e.ppid);
  out << buf << e.args << "\n";
}

}  // namespace tracekit::output
