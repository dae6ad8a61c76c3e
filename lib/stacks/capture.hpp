// Where stack tools read their events from.
//
// FtraceCapture: a private tracefs instance with the probes' events enabled
// and a "stacktrace" trigger on each (or the function tracer with
// func_stack_trace), read raw per CPU: kernel stacks, no user stacks, cheap.
// PerfCapture: perf_event_open on the same event ids on every CPU, one ring
// per CPU, with PERF_SAMPLE_CALLCHAIN: kernel and user stacks.
// Both filter by thread in the kernel when given threads (a tracepoint
// filter on common_pid, set_ftrace_pid for the function tracer).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ftrace/reader.hpp"
#include "perf/per_cpu.hpp"
#include "stacks/probes.hpp"
#include "tracefs/instance.hpp"
#include "util/result.hpp"

namespace tracekit::stacks {

enum class Backend { kAuto, kFtrace, kPerf };

struct CaptureOptions {
  std::vector<int> tids;    // only these threads; empty: all
  std::optional<int> cpu;   // only this CPU
  size_t buffer_kb = 0;     // ftrace per-CPU buffer size; 0: the kernel's default
  bool stacks = true;       // ftrace: stacktrace triggers / func_stack_trace
};

// Filters naming more threads than this are not set in the kernel.
inline constexpr size_t kMaxFilterThreads = 64;

class FtraceCapture {
 public:
  static Result<FtraceCapture> start(const std::string& tracing_dir, const Probes& probes,
                                     const CaptureOptions& o);
  FtraceCapture(FtraceCapture&&) noexcept = default;
  FtraceCapture& operator=(FtraceCapture&&) = delete;
  // Members are destroyed reader first, then the instance (which disables
  // everything and removes itself).
  ~FtraceCapture() = default;

  ftrace::Reader& reader() { return *reader_; }
  tracefs::Instance& instance() { return *instance_; }

 private:
  FtraceCapture() = default;
  std::optional<tracefs::Instance> instance_;
  std::optional<ftrace::Reader> reader_;
};

class PerfCapture {
 public:
  static constexpr uint64_t kSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                          PERF_SAMPLE_CALLCHAIN;
  // Error: the probes include function-tracer functions (perf cannot read
  // those), or perf_event_open failed.
  static Result<PerfCapture> start(const Probes& probes, const CaptureOptions& o,
                                   bool kernel_stacks, bool user_stacks);
  PerfCapture(PerfCapture&&) noexcept = default;
  PerfCapture& operator=(PerfCapture&&) = delete;

  perf::PerCpuEvents& events() { return *events_; }
  // The first event's attr: the one that asks for COMM/FORK/MMAP2 records
  // (perf::request_process_events), for perf::ProcessEvents.
  const perf_event_attr& attr() const { return attr_; }

 private:
  PerfCapture() = default;
  std::optional<perf::PerCpuEvents> events_;
  perf_event_attr attr_{};
};

}  // namespace tracekit::stacks
