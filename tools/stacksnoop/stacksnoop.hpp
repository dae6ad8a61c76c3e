// stacksnoop: print the kernel stack of every event (bcc's stacksnoop).
//
// The spec becomes kernel events (lib/session/probes) read from a private
// tracefs instance with a stacktrace trigger (lib/session/capture), raw, per
// CPU. Live by default: each event is printed as it is read. Buffered (-d
// SECS, perf-tools' mode): the buffer is enlarged, nothing is read while
// tracing, and everything is read and printed once at the end; events the
// buffer could not hold are counted and reported. When the output fails
// (the reader has gone, a second Ctrl-C), what was read but not printed is
// counted for the tool to report.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::stacksnoop {

struct Options {
  std::optional<int> pid;               // -p: every thread of this process, also later ones
  bool offset = false;                  // -s
  bool verbose = false;                 // -v
  std::optional<double> buffered_secs;  // -d
  std::string spec;
};

// Per-CPU buffer size in buffered mode.
inline constexpr size_t kBufferedKb = 8192;

class Snooper : public session::Engine {
 public:
  // Error: a message naming the cause ("no process with PID N" for a -p
  // that does not exist, before anything is set up). Events are printed to
  // out (the column header too, before the first in buffered mode).
  static Result<Snooper> start(const Options& o, std::ostream& out, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper() override;

  // Live: waits up to timeout_ms, prints what arrived, flushes out.
  void poll(int timeout_ms) override;
  // Stops tracing.
  void stop() override;
  // Unless stdout's reader has gone: reads and prints everything left (the
  // column header first in buffered mode), flushes out. Then says on err how
  // many events were read but not printed, and how many the buffers refused.
  // Once out has failed (bad), events are still read and counted, but
  // neither resolved nor printed.
  void report(std::ostream& out, std::ostream& err) override;

  // The column header, printed when tracing starts (live) or before the
  // events (buffered).
  std::string header() const;
  // Events the buffers refused (session::lost_events()).
  uint64_t dropped() const;
  // Events read from the kernel.
  uint64_t read() const;
  // Events read but not printed whole, when only the first delivered bytes
  // of out (counted as out.tellp() counts them: cli::output_written() for
  // std::cout) reached its reader: those whose text ends beyond delivered,
  // and those read after out failed. 0 while out has not failed.
  uint64_t unprinted(uint64_t delivered) const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::stacksnoop
