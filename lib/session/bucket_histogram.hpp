// A histogram counted in the kernel (perf::BucketCounters) as a run, for
// bitesize and perf-stat-hist: the tracepoint's format (for its id and
// fields), then an engine with nothing to read while tracing (a poll only
// waits, and a stop signal ends the wait), the counts taken when tracing
// stops, and a report that prints them as the tool renders them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "perf/bucket_counters.hpp"
#include "session/entry.hpp"
#include "session/run.hpp"
#include "tracefs/event_format.hpp"
#include "util/result.hpp"

namespace tracekit::session {

// The format of the tracepoint system:event, to count it with perf
// counters. Error: no perf events (the missing feature), no tracefs, or no
// such tracepoint (as tracefs::EventFormat::load says; with absent_hint as
// its hint when that is not empty: what brings the tracepoint).
Result<tracefs::EventFormat> counted_event(const std::string& system, const std::string& event,
                                           const std::string& absent_hint = "");

class BucketHistogram : public Engine {
 public:
  // The tool's histogram of the counts (one per bucket, in bucket order).
  using Render = std::function<std::string(const std::vector<uint64_t>& counts)>;
  BucketHistogram(std::string tool, perf::BucketCounters counters, Render render);

  void poll(int timeout_ms) override;
  void stop() override;
  // render(counts) on out; a failed read as "tool: error" on err.
  void report(std::ostream& out, std::ostream& err) override;

 private:
  std::string tool_;
  perf::BucketCounters counters_;
  Render render_;
};

// The end of perf-tools' header for a run of seconds: ", for 5
// seconds...\n", or ", until Ctrl-C...\n" without. Pure.
std::string histogram_header_end(std::optional<double> seconds);

// The histogram's counters (open already) as a run of perf-tools' histogram
// tools (session/entry.hpp): the header, tracing for seconds (nullopt:
// until a stop signal), then a blank line and the histogram.
Started histogram_run(const std::string& tool, perf::BucketCounters counters,
                      BucketHistogram::Render render, const std::string& header,
                      std::optional<double> seconds);

}  // namespace tracekit::session
