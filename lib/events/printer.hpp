// The engine of the tools that print events (perf-tools' tpoint, kprobe,
// uprobe): the run's events are enabled in a private instance (with their
// filter, -p/-L, and stacks from options/stacktrace or options/userstacktrace
// with -s) and read raw
// per CPU; each is printed as the kernel's trace file prints it
// (output/event_text.hpp), in timestamp order within each read.
//
// Live by default: printed as read. Buffered (-d): the buffer is enlarged,
// nothing is read while tracing, and everything is read and printed at the
// end, with the events the buffer could not hold reported.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "session/run.hpp"
#include "session/trace_session.hpp"
#include "util/result.hpp"

namespace tracekit::events {

struct Options {
  std::string tool;           // for messages: "tpoint"
  std::optional<int> pid;     // -p: every thread of this process, later ones too
  std::optional<int> tid;     // -L: this thread
  std::string filter;         // the kernel's filter syntax, on every event
  bool stacks = false;        // -s: kernel stacks
  bool user_stacks = false;   // -s of uprobe: user stacks, symbolized
  bool headers = false;       // -H: the trace file's column header
  bool buffered = false;      // -d
  bool kernel_addresses = false;  // kprobe events: their address printed as a symbol
  bool user_addresses = false;    // uprobe events: their address printed as 0x...
};

// Per-CPU buffer size in buffered mode.
inline constexpr size_t kBufferedKb = 8192;

class Printer : public session::Engine {
 public:
  // Takes the run's trace session (its probes created by the tool) and
  // starts tracing their events. Error: no such PID/TID, or a setting the
  // kernel refused (a bad filter: with the kernel's error_log line).
  static Result<Printer> start(session::TraceSession trace, const Options& o, std::ostream& out,
                               std::ostream& warn);
  Printer(Printer&&) noexcept;
  ~Printer() override;

  // The -H header, as the kernel's trace file starts ("# tracer: nop" ...).
  std::string header() const;

  void poll(int timeout_ms) override;
  void stop() override;
  // Reads and prints what is left (the -H header first, in buffered mode),
  // then reports lost events on err.
  void report(std::ostream& out, std::ostream& err) override;

  uint64_t printed() const;
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Printer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::events
