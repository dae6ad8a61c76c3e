#include "session/bucket_histogram.hpp"

#include <cerrno>
#include <ostream>
#include <sstream>

#include "cli/signals.hpp"
#include "kernel/features.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::session {

Result<tracefs::EventFormat> counted_event(const std::string& system, const std::string& event,
                                           const std::string& absent_hint) {
  auto& features = kernel::Features::host();
  if (!features.has(kernel::Feature::kPerfEvents))
    return features.missing(kernel::Feature::kPerfEvents);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto format = tracefs::EventFormat::load(*dir, system, event);
  if (!format && format.error().err == ENOENT && !absent_hint.empty()) {
    Error e = format.error();
    e.hint = absent_hint;
    return e;
  }
  return format;
}

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

std::string histogram_header_end(std::optional<double> seconds) {
  if (!seconds) return ", until Ctrl-C...\n";
  std::ostringstream s;
  s << ", for " << *seconds << " seconds...\n";
  return s.str();
}

Started histogram_run(const std::string& tool, perf::BucketCounters counters,
                      BucketHistogram::Render render, const std::string& header,
                      std::optional<double> seconds) {
  RunOptions r;
  r.header = header;
  r.duration = seconds;
  r.before_report = "\n";
  return Started{std::make_unique<BucketHistogram>(tool, std::move(counters), std::move(render)), r};
}

}  // namespace tracekit::session
