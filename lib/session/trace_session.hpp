// One run's trace session: everything the run creates in the kernel, owned
// in one place and torn down in an explicit order.
//
//   1. the probes made from the run's targets (kprobes, uprobes in a probe
//      group of the run's own; tracepoints as they are; kernel functions for
//      the function tracer where there are no kprobes), created first;
//   2. what reads their events: a private tracefs instance (with its pid
//      lists, filters, triggers or stack options, enabled events) and its
//      raw per-CPU readers, or perf events on every CPU (their fds and
//      rings);
//
// and, when the session ends, the readers and perf fds first, then the
// instance (which disables and undoes everything it set, in reverse order,
// then removes itself), then the probe group (an enabled probe cannot be
// removed). Before anything is created, what killed runs left behind is
// swept (tracefs::sweep_dead_runs), with a message per run.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "probe/spec.hpp"
#include "session/capture.hpp"
#include "session/probes.hpp"
#include "util/result.hpp"

namespace tracekit::session {

class TraceSession {
 public:
  // Sweeps dead runs' leftovers (Ctrl-C meanwhile: an EINTR error), then
  // creates the probes of targets; those the kernel refuses are skipped when
  // there are others, each said on warn ("TOOL: skipped ..."); syscalls:*
  // targets traced through raw_syscalls are said once on warn too. Error:
  // none can be probed (the kernel's reason).
  static Result<TraceSession> create(const std::string& tracing_dir, const std::string& tool,
                                     const std::vector<probe::Target>& targets,
                                     bool function_tracer, std::ostream& warn);

  TraceSession(TraceSession&&) noexcept = default;
  TraceSession& operator=(TraceSession&&) = delete;
  ~TraceSession();

  // Starts reading the probes' events through a private instance (see
  // FtraceCapture). Says on warn when -p cannot follow new threads here.
  Status read_with_ftrace(const CaptureOptions& o, std::ostream& warn);
  // Starts reading them through perf events with callchains (see
  // PerfCapture); the events are left disabled, for the caller to enable
  // once it is ready for their records.
  Status read_with_perf(const CaptureOptions& o, bool kernel_stacks, bool user_stacks);

  const std::string& tracing_dir() const { return dir_; }
  const Probes& probes() const { return *probes_; }
  // The reader started, or null.
  FtraceCapture* ftrace() { return ftrace_ ? &*ftrace_ : nullptr; }
  PerfCapture* perf() { return perf_ ? &*perf_ : nullptr; }

 private:
  TraceSession() = default;
  std::string dir_, tool_;
  std::optional<Probes> probes_;
  std::optional<FtraceCapture> ftrace_;
  std::optional<PerfCapture> perf_;
};

}  // namespace tracekit::session
