// A histogram counted in the kernel (perf::BucketCounters) as a run's
// engine, for bitesize and perf-stat-hist: nothing to read while tracing
// (a poll only waits, and a stop signal ends the wait), the counts taken
// when tracing stops, and a report that prints them as the tool renders
// them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "perf/bucket_counters.hpp"
#include "session/run.hpp"

namespace tracekit::session {

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

}  // namespace tracekit::session
