// stacksnoop's output, as bcc's stacksnoop printed it: per event a line with
// the time and an empty STACK column, then "ip: ADDR SYMBOL" for the first
// frame and "rN: ADDR SYMBOL" for each return address, every line starting
// with the event's time (and, with verbose, COMM PID CPU).
//
//   TIME(s)            STACK
//   42005194.132250004
//   42005194.132250004 ip: ffffffff81280461 ext4_sync_fs
//   42005194.132250004 r0: ffffffff811ed7f9 iterate_supers
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

#include "output/stack_report.hpp"

namespace tracekit::output {

struct SnoopEvent {
  uint64_t ts_ns = 0;
  std::string_view comm;
  int pid = 0;
  int cpu = 0;
  const std::vector<report::Frame>* frames = nullptr;  // leaf first
};

void snoop_header(std::ostream& out, bool verbose);
// offsets: "name+0x1f" for resolved frames.
void snoop_event(std::ostream& out, const SnoopEvent& e, bool verbose, bool offsets);

// opensnoop's lines, as perf-tools' opensnoop prints them: the task name
// (16 characters at most), its PID (the thread's, common_pid), the file
// descriptor in hex as the kernel's trace shows it (-1 for a failed open)
// and the file name, control characters in names as '?'; with timestamps,
// the event's time in seconds first ("TIMEs"):
//
//   TIMEs            COMM             PID      FD FILE
//   4345768.332626   cat              25640   0x3 /etc/ld.so.cache
struct OpenEvent {
  uint64_t ts_ns = 0;
  std::string_view comm;
  int pid = 0;
  int64_t fd = 0;  // the return value: negative for an error
  std::string_view file;
};

void open_header(std::ostream& out, bool timestamps);
// The TIMEs column of perf-tools' snoop tools (-t): its header, and an
// event's time in seconds with microseconds, as the kernel's trace file
// shows them, each padded to 16 characters and followed by a space.
void snoop_time_header(std::ostream& out);
void snoop_time(std::ostream& out, uint64_t ts_ns);
void open_event(std::ostream& out, const OpenEvent& e, bool timestamps);

}  // namespace tracekit::output
