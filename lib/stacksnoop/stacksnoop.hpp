// stacksnoop: print the kernel stack of every event (bcc's stacksnoop).
//
// The spec becomes kernel events (lib/stacks/probes) read from a private
// tracefs instance with a stacktrace trigger (lib/stacks/capture), raw, per
// CPU. Live by default: each event is printed as it is read. Buffered (-d
// SECS, perf-tools' mode): the buffer is enlarged, nothing is read while
// tracing, and everything is read and printed once at the end; events the
// buffer could not hold are counted and reported.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

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

class Snooper {
 public:
  // Error: a message naming the cause ("no process with PID N" for a -p
  // that does not exist, before anything is set up).
  static Result<Snooper> start(const Options& o, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper();

  // Live: waits up to timeout_ms, prints what arrived.
  void poll(int timeout_ms, std::ostream& out);
  // Stops tracing, reads and prints everything left.
  void finish(std::ostream& out);
  // Events the buffers refused.
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::stacksnoop
