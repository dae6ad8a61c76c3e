// The kernel side of a run's probe targets: tracepoints as they are, kernel
// functions as kprobes (or, on kernels without kprobes, functions for the
// function tracer), user functions as uprobes, event probes (eprobes) on
// tracepoints as tools ask for them, created in the run's own probe
// group and removed when this object is destroyed. Destroy whatever reads the
// events (an instance, perf events) first: an enabled probe cannot be removed.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "probe/spec.hpp"
#include "tracefs/dynamic_events.hpp"
#include "util/result.hpp"

namespace tracekit::session {

// A trace event to read: a tracepoint, or a probe created for a target.
struct TraceEvent {
  std::string system, event;
  int id = -1;  // events/<system>/<event>/id
};

class Probes {
 public:
  // function_tracer: kernel function entries may fall back to the function
  // tracer when the kernel has no kprobes (kretprobes cannot). Targets that
  // the kernel refuses are skipped when there are several (a glob), with the
  // reason in skipped(); an error when none can be probed.
  static Result<Probes> create(const std::string& tracing_dir,
                               const std::vector<probe::Target>& targets, bool function_tracer);

  Probes(Probes&&) noexcept = default;
  Probes& operator=(Probes&&) = delete;

  const std::vector<TraceEvent>& events() const { return events_; }
  // Kernel functions for the function tracer (kprobes missing).
  const std::vector<std::string>& functions() const { return functions_; }
  size_t size() const { return events_.size() + functions_.size(); }
  const std::vector<std::string>& skipped() const { return skipped_; }
  // The event systems to load formats for (tracepoint systems, the group).
  std::vector<std::string> systems() const;

 private:
  Probes() = default;
  std::optional<tracefs::ProbeGroup> group_;
  std::vector<TraceEvent> events_;
  std::vector<std::string> functions_;
  std::vector<std::string> skipped_;
};

}  // namespace tracekit::session
