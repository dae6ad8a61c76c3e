// Counting perf events: trace events (tracepoints, kprobes, uprobes) counted
// by the kernel, with no ring buffer and no record per hit, read with
// read(2). Counted on every CPU, or in given threads and every task they
// start afterwards (inherit: a read sums the children, exited ones too).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "perf/event.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// A trace event to count, with a filter (the kernel's syntax) or none.
struct Counted {
  int id = -1;
  std::string filter;
};

class Counters {
 public:
  // One counter per event on each online CPU (tids empty), or per thread
  // of tids; with cpu (>= 0), on that CPU only (the threads' counters count
  // while they run there). They start disabled. The file-descriptor limit is raised to
  // the hard limit first. Error: perf_event_open refused one (EMFILE: too
  // many; the hint says how many were needed), or a filter.
  static Result<Counters> open(const std::vector<Counted>& events, const std::vector<int>& tids,
                               int cpu = -1);
  Counters(Counters&&) noexcept = default;
  Counters& operator=(Counters&&) = delete;

  Status enable();
  // Each event's count since it was opened (the sum over its CPUs or threads).
  // Error: a read failed.
  Result<std::vector<uint64_t>> read() const;
  // Each event's count since the last take() (since it was opened, the
  // first time): what a report of an interval prints. Error: as read()
  // (the next take() then counts from the last one that succeeded).
  Result<std::vector<uint64_t>> take();

 private:
  Counters() = default;
  std::vector<std::vector<Fd>> fds_;  // per event
  std::vector<uint64_t> taken_;       // per event, at the last take()
};

}  // namespace tracekit::perf
