#include "output/snoop.hpp"

#include <cinttypes>
#include <cstdio>

#include "util/strings.hpp"

namespace tracekit::output {

void snoop_header(std::ostream& out, bool verbose) {
  char buf[96];
  if (verbose)
    std::snprintf(buf, sizeof buf, "%-18s %-12s %-6s %-3s %s\n", "TIME(s)", "COMM", "PID", "CPU",
                  "STACK");
  else
    std::snprintf(buf, sizeof buf, "%-18s %s\n", "TIME(s)", "STACK");
  out << buf;
}

void snoop_event(std::ostream& out, const SnoopEvent& e, bool verbose, bool offsets) {
  char prefix[96];
  uint64_t sec = e.ts_ns / 1000000000ull, nsec = e.ts_ns % 1000000000ull;
  int n = std::snprintf(prefix, sizeof prefix, "%" PRIu64 ".%09" PRIu64, sec, nsec);
  std::string time(prefix, static_cast<size_t>(n));
  if (verbose) {
    std::string comm = printable(e.comm.substr(0, 12));
    std::snprintf(prefix, sizeof prefix, "%-18s %-12s %-6d %-3d ", time.c_str(), comm.c_str(),
                  e.pid, e.cpu);
  } else {
    std::snprintf(prefix, sizeof prefix, "%-18s ", time.c_str());
  }
  out << prefix << "\n";
  if (!e.frames) return;
  report::Style style;
  style.offsets = offsets;
  for (size_t i = 0; i < e.frames->size(); ++i) {
    const report::Frame& f = (*e.frames)[i];
    char reg[32];
    if (i == 0)
      std::snprintf(reg, sizeof reg, "ip: %" PRIx64 " ", f.addr);
    else
      std::snprintf(reg, sizeof reg, "r%zu: %" PRIx64 " ", i - 1, f.addr);
    out << prefix << reg << frame_text(f, true, style) << "\n";
  }
}

void snoop_time_header(std::ostream& out) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%-16s ", "TIMEs");
  out << buf;
}

void snoop_time(std::ostream& out, uint64_t ts_ns) {
  uint64_t us = ts_ns / 1000;
  char t[40], buf[48];
  std::snprintf(t, sizeof t, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
  std::snprintf(buf, sizeof buf, "%-16s ", t);
  out << buf;
}

void open_header(std::ostream& out, bool timestamps) {
  char buf[96];
  if (timestamps) snoop_time_header(out);
  std::snprintf(buf, sizeof buf, "%-16.16s %-6s %4s %s\n", "COMM", "PID", "FD", "FILE");
  out << buf;
}

void open_event(std::ostream& out, const OpenEvent& e, bool timestamps) {
  char buf[96];
  if (timestamps) snoop_time(out, e.ts_ns);
  // Names are anyone's: control characters print as '?' (printable()), so
  // that a newline in a file name cannot forge a line, nor ESC reach the
  // terminal.
  std::string comm = printable(e.comm.substr(0, 16));
  // The descriptor as perf-tools prints it: the kernel's "sys_openat ->
  // 0x3" as it is, and -1 for any failure.
  char fd[24];
  if (e.fd < 0)
    std::snprintf(fd, sizeof fd, "-1");
  else
    std::snprintf(fd, sizeof fd, "0x%" PRIx64, static_cast<uint64_t>(e.fd));
  std::snprintf(buf, sizeof buf, "%-16.16s %-6d %4s ", comm.c_str(), e.pid, fd);
  out << buf << printable(e.file) << "\n";
}

}  // namespace tracekit::output
