#include "session/trace_session.hpp"

#include <ostream>

#include "cli/signals.hpp"
#include "feature_table/feature_table.hpp"
#include "kernel/features.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/leftovers.hpp"

namespace tracekit::session {

Result<TraceSession> TraceSession::create(const std::string& tracing_dir, const std::string& tool,
                                          const std::vector<probe::Target>& targets,
                                          bool function_tracer, std::ostream& warn) {
  if (auto st = tracefs::sweep_dead_runs(tracing_dir, tool, warn, cli::stop_requested); !st)
    return st.error();
  TraceSession s;
  s.dir_ = tracing_dir;
  s.tool_ = tool;
  auto probes = Probes::create(tracing_dir, targets, function_tracer);
  if (!probes) return probes.error();
  s.probes_.emplace(std::move(*probes));
  for (const auto& skipped : s.probes_->skipped()) warn << tool << ": skipped " << skipped << "\n";
  // Not where the tool chose raw_syscalls (stackcount on many syscalls).
  if (s.probes_->raw_syscalls() && !kernel::has_syscall_tracepoints(tracing_dir))
    warn << tool << ": "
         << syscalls::fallback_note(kernel::forced_off(kernel::Feature::kSyscallTracepoints))
         << "\n";
  return s;
}

TraceSession::~TraceSession() {
  // The readers of the events before what they read: perf fds, then the
  // instance and its readers (FtraceCapture destroys its reader first),
  // then the probes. Releasing perf events is slow on many events: said.
  if (perf_ && probes_) say_detaching(tool_, probes_->events().size());
  perf_.reset();
  ftrace_.reset();
  probes_.reset();
}

Status TraceSession::read_with_ftrace(const CaptureOptions& o, std::ostream& warn) {
  auto c = FtraceCapture::start(dir_, *probes_, o);
  if (!c) return c.error();
  ftrace_.emplace(std::move(*c));
  if (o.pid && !ftrace_->follows_new_threads())
    warn << tool_ << ": this kernel's tracefs cannot follow forks (no set_event_pid or "
                     "options/event-fork): threads PID "
         << *o.pid << " starts from now on are not traced\n";
  return {};
}

Status TraceSession::read_with_perf(const CaptureOptions& o, bool kernel_stacks, bool user_stacks) {
  auto c = PerfCapture::start(*probes_, o, kernel_stacks, user_stacks);
  if (!c) return c.error();
  perf_.emplace(std::move(*c));
  return {};
}

}  // namespace tracekit::session
