// Process and thread names (comm) for samples, which carry only pid/tid.
//
// Names come first from the side-band records a perf event emits with
// attr.comm and attr.task set: COMM (exec, prctl) and FORK (a new task starts
// with its parent's name). Tasks that existed before tracing began are named
// from /proc at the start (note_existing(), as perf record does), so that a
// task that ends before its samples are read is still named; a task seen
// before any record and not noted is looked up once in /proc/PID/task/TID/comm.
// The idle task (tid 0) is "swapper/CPU", as the kernel names it.
//
// Records arrive CPU by CPU, so a new task's sample is often read before
// the FORK or COMM record that names it (written on another CPU), when its
// /proc entry is already gone. comm() then gives a placeholder for that
// thread rather than a final "[unknown]", and settle() turns it into the
// name a record gave the thread since: callers that key by name settle the
// names they print, after the last records are read.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <optional>
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

  // Names every thread alive now from /proc/PID/task/TID/comm (only pid's
  // threads when pid is given), leaving names already known as they are.
  // Call once the events are enabled and before their records are read: a
  // thread that existed then is named, even when it has ended by the time
  // its samples are read; later COMM and FORK records rename.
  void note_existing(std::optional<uint32_t> pid = std::nullopt);

  // The name of thread tid of process pid, sampled on cpu. When no record
  // named it yet and /proc no longer has it: a placeholder for the thread
  // (starting with a NUL byte, which no comm holds) for settle(). The view
  // stays valid until the next call that changes this object.
  std::string_view comm(uint32_t pid, uint32_t tid, uint32_t cpu);

  // What comm() gave, settled: a placeholder becomes the name a COMM or
  // FORK record has given its thread since (the latest), else what
  // fallback says of the thread (tools reading ftrace: the kernel's
  // saved_cmdlines), else its process's name when that is known, else
  // "[unknown]"; any other name is returned as it is.
  using Fallback = std::function<std::optional<std::string>(uint32_t tid)>;
  std::string settle(std::string_view comm, const Fallback& fallback = {}) const;

 private:
  std::string proc_;
  std::unordered_map<uint32_t, std::string> by_tid_;
  std::string scratch_;
};

}  // namespace tracekit::perf
