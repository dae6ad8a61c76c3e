// The block request events of one run of iosnoop or iolatency, read and
// paired: a trace session on block:block_rq_issue (with -Q also
// block_rq_insert), block_rq_requeue and block_rq_complete in a private
// instance, filtered in the kernel (-d: dev, -i: a glob on rwbs, on every
// event; -p: common_pid on the start event), read raw per CPU, decoded by
// field name (block/event.hpp) and paired by device and sector
// (block/pairing.hpp). When the rings dropped events, the pairing starts
// afresh (its pending starts may never complete, or pair wrongly).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "family/block/pairing.hpp"
#include "util/result.hpp"

namespace tracekit::block {

struct TraceOptions {
  bool queue = false;      // -Q: the start is block_rq_insert (issue if never inserted)
  std::string device;      // -d: this device only, as parse_device() takes it
  std::string iotype;      // -i: a glob the rwbs field must match ("*R*")
  std::optional<int> pid;  // -p: I/O started by this task
  size_t buffer_kb = 0;    // per-CPU buffer; 0: the kernel's
};

// The kernel filter of -i: rwbs ~ "GLOB". Error: an empty glob, or one
// with a quote, backslash or newline.
Result<std::string> iotype_filter(const std::string& glob);

class Tracer {
 public:
  // Sweeps dead runs of tool, sets everything up, starts tracing. Error: no
  // such device (-d), a bad -i glob, no block tracepoints (their kernel
  // config named), or a setting the kernel refused (the filter, the
  // instance).
  static Result<Tracer> start(const std::string& tool, const TraceOptions& o, std::ostream& warn);
  Tracer(Tracer&&) noexcept;
  ~Tracer();

  // Waits up to timeout_ms, reads what arrived and hands out finished I/Os.
  void poll(int timeout_ms, const Pairer::Done& done);
  // Turns tracing off.
  void stop();
  // Reads what is left, pairs it and hands out the last finished I/Os.
  void flush(const Pairer::Done& done);

  uint64_t dropped() const;
  const PairStats& stats() const;

 private:
  struct Impl;
  explicit Tracer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::block
