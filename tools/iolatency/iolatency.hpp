// iolatency: block I/O latencies as a histogram every interval (perf-tools'
// iolatency), from block/tracer.hpp's paired requests. Buckets are powers
// of two in milliseconds: bucket 0 holds latencies up to 1 ms, bucket i
// those above 2^(i-1) ms and up to 2^i ms (perf-tools' rule).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "family/block/tracer.hpp"
#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::iolatency {

struct Options {
  block::TraceOptions trace;  // -Q -d -i
  bool timestamps = false;    // -T: each histogram begins with the time of day
  double interval = 1;
  std::optional<long> count;  // summaries, then exit
};

// The bucket of a latency in nanoseconds.
size_t bucket(uint64_t ns);

class Histogram : public session::Engine {
 public:
  // Error: a bad -i glob, or what block::Tracer::start says.
  static Result<Histogram> start(const Options& o, std::ostream& warn);
  Histogram(Histogram&&) noexcept;
  ~Histogram() override;

  void poll(int timeout_ms) override;
  void stop() override;
  // A blank line, the time with -T, the histogram of the I/O finished since
  // the last; then clears it. Lost events are warned of on err.
  void report(std::ostream& out, std::ostream& err) override;

  // I/O counted since start (all reports).
  uint64_t total() const;

 private:
  struct Impl;
  explicit Histogram(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::iolatency
