// killsnoop's lines, as perf-tools' killsnoop prints them: the sender's
// task name (16 characters at most), its PID (the thread's, common_pid),
// the target, the signal (a number, or a name with -s) and the return
// value (0, or -errno: perf-tools says -1 for any failure); with
// timestamps, the call's time in seconds first ("TIMEs"):
//
//   TIMEs            COMM             PID    TPID     SIGNAL     RETURN
//   4345768.332626   bash             25640  25712    15         0
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

namespace tracekit::output {

struct KillEvent {
  uint64_t ts_ns = 0;
  std::string_view comm;
  int pid = 0;
  int tpid = 0;
  std::string_view signal;  // "15" or "SIGTERM"
  int64_t ret = 0;
};

void kill_header(std::ostream& out, bool timestamps);
void kill_event(std::ostream& out, const KillEvent& e, bool timestamps);

}  // namespace tracekit::output
