// Counting kernel function calls (and tracepoint and user function hits) in
// the kernel, by one of the ways funccount has (funccount.hpp's list): the
// function profiler at the top level under perf-tools' lock, perf counters
// on the run's probe events, the function tracer in the run's instance
// counted by address, or many tracepoints' events in the run's instance
// counted by event id. Shared by the tools that count functions: funccount
// prints the counts as they are, cachestat computes page cache hits and
// misses from them. A run's way of counting: in session/, above the probes,
// perf counters and trace sessions it drives (lib/LAYERS). Its namespace is
// still funccount's, whose ways these are.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "tracefs/top_level.hpp"
#include "util/result.hpp"

namespace tracekit::funccount {

enum class Backend {
  kProfiler,
  kKprobeCounters,
  kFunctionTracer,
  kEventCounters,
  kEventTracer,
};
// "the function profiler", "perf counters on kprobes", ...
std::string_view backend_name(Backend b);

// The ways for kernel functions, in order, given what the kernel has; the
// profiler only without -p. Pure.
std::vector<Backend> kernel_function_backends(bool profiler, bool kprobes, bool function_tracer,
                                              bool pid);

// The ways for kernel functions on this host (features, with
// TRACEKIT_KERNEL_FEATURES applied), in order; empty when there is none.
std::vector<Backend> host_kernel_function_backends(kernel::Features& f, bool pid);

// Above this many tracepoints, they are counted from the run's instance
// (kEventTracer) rather than by perf counters: the kernel tears down a
// tracepoint's last perf event with a synchronisation under event_mutex
// (perf_trace_event_unreg -> tracepoint_synchronize_unregister), 35 to 40
// ms each here, one after the other, so 4 stay under the 200 ms teardown
// target; disabling events in an instance costs under 0.1 s for 360.
inline constexpr size_t kMaxCountedTracepoints = 4;

// The way for tracepoint targets (t:): kEventTracer for more than
// kMaxCountedTracepoints where the kernel has instances, else
// kEventCounters. Syscall stand-ins (syscall_nr set) count one each too:
// they close with one synchronisation, but each is a perf counter whose
// filter runs on every system call of the machine (345 of them made a
// getppid() call 80 times slower), where the instance runs one. Pure.
Backend tracepoint_backend(const std::vector<probe::Target>& targets, bool instances);

// The ftrace per-CPU buffer for kEventTracer, and how often it is read at
// least: a syscall tracepoint's record is 20 to 70 bytes
// (raw_syscalls:sys_enter's, a stand-in's, 68), so 16 MiB hold 0.24 s of
// a 1 M events/s burst on one CPU at worst, more than twice the wait.
inline constexpr size_t kEventTracerBufferKb = 16384;
inline constexpr int kEventTracerPollMs = 100;

// Why no way of counting kernel functions works here: each missing feature
// (or "turned off by TRACEKIT_KERNEL_FEATURES"), with the CONFIG options
// that bring one in the hint.
Error no_kernel_function_backend(kernel::Features& f, bool pid);

// The hits of each function in a trace_stat/function<N> text (rows whose
// second column is a number: "  vfs_read   997    1234.5 us ..."). Pure.
std::vector<std::pair<std::string, uint64_t>> parse_trace_stat(std::string_view text);

// Counts of the run's functions or events, by name (the kernel function, or
// "system:event"), kept in the kernel where the way allows it.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;
  virtual ~Counter() = default;
  // Waits up to timeout_ms (the function tracer reads its rings meanwhile).
  virtual void poll(int timeout_ms) = 0;
  // The end of counting: the last counts are read or the tracer stopped.
  virtual void stop() = 0;
  // The counts since the last take (names never hit may be left out or be
  // 0), and counting starts again from zero. Problems (a failed read, lost
  // events) are said on err, prefixed with the tool's name.
  virtual std::map<std::string, uint64_t> take(std::ostream& err) = 0;
};

struct CounterOptions {
  std::string tool;  // for messages and the probe group's name
  std::string tracing_dir;
  std::optional<int> pid;                        // counters in these threads, or a pid list
  std::optional<int> cpu;                        // -c: this CPU only
  std::string lock_path = tracefs::kFtraceLock;  // the profiler's lock
};

// Starts counting targets (kernel functions for kProfiler, kKprobeCounters
// and kFunctionTracer; any target for kEventCounters; tracepoints for
// kEventTracer) the way b says. What
// it created in the kernel is undone when the counter is destroyed.
// Warnings (skipped targets) go to warn. Error: the lock is held (naming the
// holder), a probe or counter the kernel refused, no such process.
Result<std::unique_ptr<Counter>> start_counter(Backend b, const std::vector<probe::Target>& targets,
                                               const CounterOptions& o, std::ostream& warn);

}  // namespace tracekit::funccount
