// Process and thread names (comm) for samples, which carry only pid/tid.
//
// Names come first from the side-band records a perf event emits with
// attr.comm and attr.task set: COMM (exec, prctl) and FORK (a new task starts
// with its parent's name). A task seen before any record (it existed before
// tracing began) is looked up once in /proc/PID/task/TID/comm. The idle task
// (tid 0) is "swapper/CPU", as the kernel names it.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tracekit::perf {

class TaskNames {
 public:
  // Where /proc is (tests point it at a fake tree).
  explicit TaskNames(std::string proc_root = "/proc") : proc_(std::move(proc_root)) {}

  // Takes a COMM or FORK record into account; other records are ignored.
  // Returns true when the record was a COMM with the exec flag for a process
  // (its mappings changed).
  bool handle(const perf_event_header& header, std::span<const uint8_t> record);

  // The name of thread tid of process pid, sampled on cpu. "[unknown]" when
  // the thread ended before it could be looked up. The view stays valid until
  // the next call that changes this object.
  std::string_view comm(uint32_t pid, uint32_t tid, uint32_t cpu);

 private:
  std::string proc_;
  std::unordered_map<uint32_t, std::string> by_tid_;
  std::string scratch_;
};

}  // namespace tracekit::perf
