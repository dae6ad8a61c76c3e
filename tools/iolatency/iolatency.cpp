#include "iolatency/iolatency.hpp"

#include <ctime>
#include <ostream>

#include "family/block/render.hpp"

namespace tracekit::iolatency {

size_t bucket(uint64_t ns) {
  size_t i = 0;
  // latency > ms: the next bucket (integer arithmetic on nanoseconds).
  for (uint64_t ms_ns = 1000000; ns > ms_ns && i < 63; ms_ns *= 2) ++i;
  return i;
}

struct Histogram::Impl {
  Options o;
  std::optional<block::Tracer> tracer;
  std::vector<uint64_t> counts;
  uint64_t total = 0, lost_reported = 0;

  void add(const block::Io& io) {
    size_t b = bucket(io.end_ts >= io.start_ts ? io.end_ts - io.start_ts : 0);
    if (counts.size() <= b) counts.resize(b + 1);
    ++counts[b];
    ++total;
  }
};

Histogram::Histogram(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Histogram::Histogram(Histogram&&) noexcept = default;
Histogram::~Histogram() = default;

Result<Histogram> Histogram::start(const Options& o, std::ostream& warn) {
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  auto tracer = block::Tracer::start("iolatency", o.trace, warn);
  if (!tracer) return tracer.error();
  impl->tracer.emplace(std::move(*tracer));
  return Histogram(std::move(impl));
}

void Histogram::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.tracer->poll(timeout_ms, [&](const block::Io& io) { m.add(io); });
}

void Histogram::stop() {
  Impl& m = *impl_;
  m.tracer->stop();
  m.tracer->flush([&](const block::Io& io) { m.add(io); });
}

void Histogram::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  out << "\n";
  if (m.o.timestamps) {
    char buf[16];
    std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%H:%M:%S:", std::localtime(&now));
    out << buf << "\n";
  }
  output::latency_histogram(out, m.counts);
  m.counts.clear();
  const uint64_t lost = m.tracer->dropped();
  if (lost > m.lost_reported) {
    session::report_lost(err, lost - m.lost_reported, false);
    m.lost_reported = lost;
  }
}

uint64_t Histogram::total() const { return impl_->total; }

}  // namespace tracekit::iolatency
