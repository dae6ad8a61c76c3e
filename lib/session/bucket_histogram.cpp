#include "session/bucket_histogram.hpp"

#include <ostream>

#include "cli/signals.hpp"

namespace tracekit::session {

BucketHistogram::BucketHistogram(std::string tool, perf::BucketCounters counters, Render render)
    : tool_(std::move(tool)), counters_(std::move(counters)), render_(std::move(render)) {}

void BucketHistogram::poll(int timeout_ms) { cli::sleep_unless_stopped(timeout_ms); }

void BucketHistogram::stop() { counters_.stop(); }

void BucketHistogram::report(std::ostream& out, std::ostream& err) {
  auto counts = counters_.counts();
  if (!counts)
    err << tool_ << ": " << counts.error().str() << "\n";
  else
    out << render_(*counts);
}

}  // namespace tracekit::session
