#include "tcpretrans/render.hpp"

#include <cstdio>
#include <string>

#include "util/strings.hpp"

namespace tracekit::output {

void retransmit_header(std::ostream& out) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "%-8s %-6s %-20s -- %-20s %-12s\n", "TIME", "PID", "LADDR:LPORT",
                "RADDR:RPORT", "STATE");
  out << buf;
}

void retransmit_line(std::ostream& out, const RetransmitLine& l) {
  const std::string time(l.time), local(l.local), remote(l.remote), state(l.state);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-8s %-6d %-20s %c> %-20s %-12s\n", time.c_str(), l.pid,
                local.c_str(), l.loss_probe ? 'L' : 'R', remote.c_str(), state.c_str());
  out << buf;
  if (l.stack)
    for (const auto& frame : *l.stack) out << " => " << printable(frame) << "\n";
}

}  // namespace tracekit::output
