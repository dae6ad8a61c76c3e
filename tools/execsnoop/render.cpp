#include "execsnoop/render.hpp"

#include <cstdio>

#include "output/snoop.hpp"
#include "util/strings.hpp"

namespace tracekit::output {

void exec_header(std::ostream& out, bool timestamps) {
  char buf[64];
  if (timestamps) snoop_time_header(out);
  std::snprintf(buf, sizeof buf, "%6s %6s %s\n", "PID", "PPID", "ARGS");
  out << buf;
}

void exec_event(std::ostream& out, const ExecEvent& e, bool timestamps) {
  char buf[64];
  if (timestamps) snoop_time(out, e.ts_ns);
  std::snprintf(buf, sizeof buf, "%6d %6d ", e.pid, e.ppid);
  // Arguments are anyone's: control characters in cat -v's caret form, as
  // perf-tools' execsnoop (which pipes the trace through cat -v) shows
  // them, and newlines too, which would forge a line.
  out << buf << printable(e.args, ControlForm::kCaret) << "\n";
}

}  // namespace tracekit::output
