// stackcount: count events by stack (bcc's stackcount, without BPF).
//
// The pattern expands to probe targets (lib/probe), which become kernel
// events (lib/session/probes). Kernel stacks only (-K): a private tracefs
// instance with a stacktrace trigger per event (kprobes: the stacktrace
// option, which unwinds from the probe's registers), read raw
// (FtraceCapture); the probed function (and, for the function tracer, its
// caller) put first where the kernel's unwinder left them out
// (stackcount/entry_frame.hpp).
// User stacks (the default, kernel + user, as bcc): perf_event_open on the
// same events with PERF_SAMPLE_CALLCHAIN (PerfCapture), and for uprobes at
// functions' entries the 8 bytes at the user stack pointer, the caller
// (perf::with_entry_caller). --backend forces one. Events are counted by (process when -P, kernel stack, user stack) in
// user space; names are resolved at each report.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "report/files.hpp"
#include "aggregate/stack_counts.hpp"
#include "perf/task_names.hpp"
#include "report/stack_records.hpp"
#include "session/run.hpp"
#include "session/capture.hpp"
#include "symbols/user.hpp"
#include "util/result.hpp"

namespace tracekit::stackcount {

struct Options {
  std::optional<int> pid;            // -p: every thread of this process, also later ones
  std::optional<int> cpu;            // -c
  std::optional<double> interval;    // -i
  std::optional<double> duration;    // -D
  bool timestamp = false;            // -T
  bool regex = false;                // -r
  bool offset = false;               // -s
  bool per_pid = false;              // -P
  bool kernel_only = false;          // -K
  bool user_only = false;            // -U
  bool verbose = false;              // -v
  bool delimited = false;            // -d
  bool folded = false;               // -f
  session::Backend backend = session::Backend::kAuto;
  perf::CallGraph call_graph;        // --call-graph (perf backend)
  std::string pattern;
  report::OutputOptions output;      // -o, --format
};

class Counter : public session::Engine {
 public:
  // Expands the pattern, creates the probes and starts reading. Notes about
  // the choices made (function tracer fallback, skipped functions, threads
  // that cannot be followed) go to warn. Error: a message naming the cause
  // ("no process with PID N" for a -p that does not exist; zero matches:
  // probe::no_match_error's).
  static Result<Counter> start(const Options& o, std::ostream& warn);
  Counter(Counter&&) noexcept;
  ~Counter() override;

  // How many functions/events are traced (the header's N).
  size_t traced() const;
  void poll(int timeout_ms) override;
  void stop() override;
  // Prints the counts so far (multi-line or folded) and clears them;
  // warnings go to err.
  void report(std::ostream& out, std::ostream& err) override;

 private:
  struct Impl;
  explicit Counter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// How report() prints for these options, given which stacks are collected:
// bcc's stackcount formats (frames indented 2, "    comm [pid]" with -P,
// comm first in folded lines with -P). Pure.
report::PrintOptions report_options(const Options& o, bool kernel_stacks, bool user_stacks);

}  // namespace tracekit::stackcount
