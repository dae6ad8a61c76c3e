// iosnoop: every block device I/O with its task, type, device, sector,
// size and latency (perf-tools' iosnoop), from block/tracer.hpp's paired
// requests. -d, -i and -p are kernel filters; -n (a regex on the name of
// the task that started the I/O) is applied here. Live by default;
// buffered with a duration: nothing is read while tracing, the events are
// read and printed once at the end.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "family/block/tracer.hpp"
#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::iosnoop {

struct Options {
  block::TraceOptions trace;       // -Q -d -i -p
  std::string name;                // -n: a regex searched in the task name
  bool start_times = false;        // -s
  bool end_times = false;          // -t
  std::optional<double> duration;  // buffered for this many seconds
};

// Per-CPU buffer size with a duration (perf-tools' bufsize_kb).
inline constexpr size_t kBufferedKb = 4096;

class Snooper : public session::Engine {
 public:
  // Error: a bad -n regex or -i glob, or what block::Tracer::start says.
  static Result<Snooper> start(const Options& o, std::ostream& out, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper() override;

  void poll(int timeout_ms) override;
  void stop() override;
  // Unless stdout's reader has gone: reads and prints what is left. Then
  // warns of lost events (and how often pairing started afresh).
  void report(std::ostream& out, std::ostream& err) override;

  std::string header() const;  // the column header
  uint64_t printed() const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::iosnoop
