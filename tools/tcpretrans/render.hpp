// tcpretrans's lines, as perf-tools' tcpretrans prints them: the time of
// day, the PID the event fired in (often 0: the kernel's timers
// retransmit), the local and remote ends joined by "R>" for a retransmit
// or "L>" for a tail loss probe, and the socket's TCP state; with -s, the
// kernel stack follows, a " => function" line per frame, leaf first:
//
//   TIME     PID    LADDR:LPORT          -- RADDR:RPORT          STATE
//   05:16:44 3375   10.150.18.225:53874  R> 10.105.152.3:6001    ESTABLISHED
//    => __tcp_retransmit_skb
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit::output {

struct RetransmitLine {
  std::string_view time;  // HH:MM:SS
  int pid = 0;
  bool loss_probe = false;  // "L>" rather than "R>"
  std::string_view local, remote, state;
  const std::vector<std::string>* stack = nullptr;  // frames' names, leaf first
};

void retransmit_header(std::ostream& out);
void retransmit_line(std::ostream& out, const RetransmitLine& l);

}  // namespace tracekit::output
