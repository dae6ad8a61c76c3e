// offcputime: time spent blocked, summed by blocked stack and thread.
//
// One perf event per CPU on the sched:sched_switch tracepoint, sampling every
// switch with PERF_SAMPLE_CALLCHAIN | RAW | TID | TIME | CPU. At a switch the
// callchain is the outgoing task's (prev): where it blocked. The RAW record
// (decoded with the tracepoint's format file through libtraceevent) gives
// prev_pid, prev_state and prev_comm. The same events carry perf's
// context-switch records (attr.context_switch), which give every switch-in.
// A period runs from a task's switch-out to its next switch-in on any CPU
// (see offcpu/pairing.hpp); its length in microseconds is added to (thread,
// comm, kernel stack, user stack). -t goes into the kernel as a tracepoint
// filter on the samples, so a busy system does not flood the rings with
// stacks of other processes. -p samples every thread of the process, those
// it starts later included, with per-thread inherited events writing into
// the same rings (perf/follow.hpp), while the per-CPU events sample nothing
// (a filter no switch matches) and still give the switch-ins of every CPU;
// the switch-outs of the process's child processes, which inherit the
// events too, are dropped by their pid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "perf/sample.hpp"
#include "report/files.hpp"
#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::offcpu {

struct Options {
  std::optional<int> pid;  // -p: this process (tgid) only, its later threads included
  std::optional<int> tid;  // -t: this thread only
  bool user_threads_only = false;    // -u
  bool kernel_threads_only = false;  // -k
  bool user_stacks_only = false;     // -U
  bool kernel_stacks_only = false;   // -K
  bool delimited = false;            // -d
  bool folded = false;               // -f
  bool offsets = false;              // -s
  bool addresses = false;            // -v
  size_t stack_storage = 16384;      // --stack-storage-size
  size_t hash_storage = 40960;       // --hash-storage-size
  uint64_t min_us = 1;               // -m
  uint64_t max_us = UINT64_MAX;      // -M
  std::optional<uint64_t> state;     // --state
  perf::CallGraph call_graph;        // --call-graph: how user stacks are taken
  std::optional<double> duration;
  report::OutputOptions output;      // -o, --format
};

// "Tracing off-CPU time (us) of all threads by user + kernel stack... Hit
// Ctrl-C to end." and its variants, as bcc prints them.
std::string header(const Options& o);

class Tracer : public session::Engine {
 public:
  // Checks the options against this machine (PID/TID exist), opens the
  // events with the kernel filter and enables them. Error: no such process
  // or thread, or a perf event or filter the kernel refuses.
  static Result<Tracer> start(const Options& o);

  Tracer(Tracer&&) noexcept;
  ~Tracer() override;

  void poll(int timeout_ms) override;
  void stop() override;
  void report(std::ostream& out, std::ostream& err) override;

 private:
  struct Impl;
  explicit Tracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::offcpu
