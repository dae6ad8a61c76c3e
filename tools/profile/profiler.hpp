// profile: on-CPU stack sampling with perf_event_open.
//
// One cpu-clock event per CPU samples at a frequency (or every COUNT
// nanoseconds of CPU time) with PERF_SAMPLE_CALLCHAIN. Each sample is keyed by
// (tgid, thread name, kernel stack, user stack) and counted in user space.
// Process filters (-p, -L) and idle exclusion are applied to samples as they
// are read, as bcc does in its BPF program; -C opens the event on one CPU only.
// Names are resolved once per unique frame when the report is printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "perf/sample.hpp"
#include "report/files.hpp"
#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::profile {

struct Options {
  std::vector<int> pids;  // -p: processes (tgids); empty = all
  std::vector<int> tids;  // -L: threads; empty = all
  bool user_only = false;    // -U
  bool kernel_only = false;  // -K
  int frequency = 49;        // -F, Hertz (ignored when count is set)
  std::optional<uint64_t> count;  // -c: sample period, in cpu-clock nanoseconds
  bool delimited = false;     // -d
  bool annotate = false;      // -a
  bool include_idle = false;  // -I
  bool folded = false;        // -f
  size_t stack_storage = 16384;  // --stack-storage-size
  size_t hash_storage = 40960;   // --hash-storage-size
  std::optional<int> cpu;        // -C
  perf::CallGraph call_graph;    // --call-graph: how user stacks are taken
  std::optional<double> duration;
  report::OutputOptions output;  // -o, --format
};

// "Sampling at 49 Hertz of all threads by user + kernel stack... Hit Ctrl-C
// to end." (with the variants bcc prints for -p/-L/-U/-K/-c/-C/duration).
std::string header(const Options& o);

// Whether o's sampling rate is within max_rate samples per second (this
// kernel's kernel.perf_event_max_sample_rate): -F HZ, or -c COUNT as 1e9 /
// COUNT (a sample every COUNT ns of CPU time). Error: names the option
// given and the bound it must keep (hint: the smallest -c allowed). A
// max_rate <= 0 bounds nothing. Pure.
Status check_rate(const Options& o, long max_rate);

// The hint of the lost-events warning (perf::lost_events_warning), naming
// the option that sets the rate: "try a higher -c" with -c, else "try a
// lower -F". Pure.
std::string lost_hint(const Options& o);

class Profiler : public session::Engine {
 public:
  // Checks the options against this machine (PIDs exist, CPU online,
  // frequency allowed), opens and enables the events. Error: a message
  // naming the cause and the fix. stop (may be empty): asked before each
  // record poll() reads; once it returns true, poll() returns at once (the
  // tools pass cli::stop_requested).
  static Result<Profiler> start(const Options& o, std::function<bool()> stop = {});
  Profiler(Profiler&&) noexcept;
  ~Profiler() override;

  // Waits up to timeout_ms for samples and consumes what arrived, a bounded
  // number of records per ring (what is left waits for the next poll).
  void poll(int timeout_ms) override;
  // Stops sampling and consumes what is left in the rings.
  void stop() override;

  // Prints the report (multi-line or folded) to out and warnings (lost
  // samples, full tables) to err.
  void report(std::ostream& out, std::ostream& err) override;

  // Samples counted (those the filters kept).
  uint64_t samples() const;

 private:
  struct Impl;
  explicit Profiler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::profile
