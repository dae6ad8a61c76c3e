// execsnoop's lines, as perf-tools' execsnoop prints them: the new
// process's PID, its parent's PID and its arguments; with timestamps, the
// exec's time in seconds first ("TIMEs"):
//
//   TIMEs               PID   PPID ARGS
//   4345768.332626    25640  25639 ls -l /etc
//
// Control characters in the arguments print in cat -v's caret notation
// ("^[" for ESC, "^J" for a newline: printable(), util/strings.hpp).
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace tracekit::output {

struct ExecEvent {
  uint64_t ts_ns = 0;
  int pid = 0;
  int ppid = 0;  // 0: not known
  std::string_view args;
};

void exec_header(std::ostream& out, bool timestamps);
void exec_event(std::ostream& out, const ExecEvent& e, bool timestamps);

}  // namespace tracekit::output
