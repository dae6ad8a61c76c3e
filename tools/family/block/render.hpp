// iosnoop's and iolatency's output, as perf-tools prints them.
//
// iosnoop: one line per finished I/O; with start/end (-s/-t) the start and
// completion times in seconds first:
//
//   STARTs          ENDs            COMM         PID    TYPE DEV      BLOCK        BYTES     LATms
//   6186.336190     6186.336232     dd           9584   WS   7,0      0            4096       0.04
//
// iolatency: a histogram of latencies in power-of-two millisecond buckets
// (0 -> 1 holds I/O up to 1 ms, 1 -> 2 above 1 and up to 2 ms, ...), every
// bucket up to the highest used, with a bar of '#' 38 wide at the most:
//
//     >=(ms) .. <(ms)   : I/O      |Distribution                          |
//          0 -> 1       : 1913     |######################################|
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string_view>

namespace tracekit::output {

struct IoLine {
  uint64_t start_ns = 0, end_ns = 0;
  std::string_view comm;
  int pid = 0;
  std::string_view type;  // rwbs
  std::string_view dev;   // "7,0"
  uint64_t sector = 0;
  uint64_t bytes = 0;
};

void io_header(std::ostream& out, bool start, bool end);
void io_line(std::ostream& out, const IoLine& l, bool start, bool end);

// buckets[i]: the I/O counts of bucket i (see above); at least one row is
// printed (0 -> 1), also when nothing was counted.
void latency_histogram(std::ostream& out, std::span<const uint64_t> buckets);

}  // namespace tracekit::output
