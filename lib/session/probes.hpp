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
  // raw_syscalls:sys_enter/sys_exit standing for syscalls:* events (kernels
  // without syscall tracepoints; syscalls/raw.hpp): the syscall numbers, and
  // the filter the event needs for them ("id == 110"), to be joined with any
  // other filter. Empty for every other event.
  std::vector<int> syscalls;
  std::string filter;
  // What it traces, for reports: the function of a kprobe or uprobe
  // ("vfs_read", "do_reads"), "system:event" of a tracepoint or event probe.
  std::string target;
};

// The kernel releases the perf events on a trace event with a
// synchronisation when the last closes, one event after the other (45 to 90
// ms each: funccount's counters on 802 uprobes took 72 s, 672 kprobes 14 s
// in the 6.1 VM), so a tool closing perf events on more than this many
// events says so first.
inline constexpr size_t kSlowPerfDetach = 4;

// "TOOL: detaching N probes (Ctrl-C again to leave the rest to the next
// run)..." on stderr, flushed, when events > kSlowPerfDetach; nothing
// otherwise. A second Ctrl-C then ends the run at once (cli/signals.cpp).
void say_detaching(const std::string& tool, size_t events);

class Probes {
 public:
  // function_tracer: kernel function entries may fall back to the function
  // tracer when the kernel has no kprobes (kretprobes cannot). Targets with
  // a syscall_nr (syscalls:* on a kernel without syscall tracepoints) become
  // one raw_syscalls:sys_enter and one sys_exit event at most, with an id
  // filter; they are skipped when raw_syscalls:sys_enter (or sys_exit) is a
  // target itself, which an event filter would narrow. Targets that
  // the kernel refuses are skipped when there are several (a glob), with the
  // reason in skipped(); an error when none can be probed. User probes with
  // shared_event and the same event_name are one event (the first's), the
  // others appended to it; one the kernel refuses so gets its own event.
  static Result<Probes> create(const std::string& tracing_dir,
                               const std::vector<probe::Target>& targets, bool function_tracer);

  Probes(Probes&&) noexcept = default;
  Probes& operator=(Probes&&) = delete;

  const std::vector<TraceEvent>& events() const { return events_; }
  // Kernel functions for the function tracer (kprobes missing).
  const std::vector<std::string>& functions() const { return functions_; }
  // How many targets are traced: a raw_syscalls event counts its syscalls.
  size_t size() const;
  // Whether some syscalls:* targets are traced through raw_syscalls.
  bool raw_syscalls() const;
  // Whether some events are uprobes (which write only to the top level's
  // buffer before Linux 3.14).
  bool uprobes() const { return uprobes_; }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  Probes() = default;
  std::optional<tracefs::ProbeGroup> group_;
  std::vector<TraceEvent> events_;
  std::vector<std::string> functions_;
  std::vector<std::string> skipped_;
  bool uprobes_ = false;
};

}  // namespace tracekit::session
