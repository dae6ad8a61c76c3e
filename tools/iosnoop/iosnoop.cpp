#include "iosnoop/iosnoop.hpp"

#include <csignal>
#include <ostream>
#include <sstream>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "family/block/render.hpp"
#include "probe/match.hpp"
#include "util/proc.hpp"

namespace tracekit::iosnoop {

struct Snooper::Impl {
  Options o;
  std::ostream* out = nullptr;
  std::optional<block::Tracer> tracer;
  std::optional<probe::Matcher> name;
  uint64_t printed = 0;

  void print(std::ostream& to, const block::Io& io) {
    if (!to) return;
    if (name && !(*name)(io.comm)) return;
    const std::string dev = block::device_text(io.dev);
    output::io_line(to,
                    {io.start_ts, io.end_ts, io.comm, io.pid, io.rwbs, dev, io.sector, io.bytes},
                    o.start_times, o.end_times);
    ++printed;
  }
};

Snooper::Snooper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Snooper::Snooper(Snooper&&) noexcept = default;
Snooper::~Snooper() = default;

Result<Snooper> Snooper::start(const Options& o, std::ostream& out, std::ostream& warn) {
  // As perf-tools' man page says (exit 1), and as the other tools' -p do:
  // a PID that names no process would trace nothing, quietly.
  if (o.trace.pid && !process_exists(*o.trace.pid)) return no_process_error(*o.trace.pid);
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->out = &out;
  auto name_re = probe::Matcher::optional_regex(o.name);
  if (!name_re) return name_re.error();
  impl->name = std::move(*name_re);
  block::TraceOptions t = o.trace;
  if (o.duration) t.buffer_kb = kBufferedKb;
  auto tracer = block::Tracer::start("iosnoop", t, warn);
  if (!tracer) return tracer.error();
  impl->tracer.emplace(std::move(*tracer));
  return Snooper(std::move(impl));
}

std::string Snooper::header() const {
  std::ostringstream h;
  output::io_header(h, impl_->o.start_times, impl_->o.end_times);
  return h.str();
}

void Snooper::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.tracer->poll(timeout_ms, [&](const block::Io& io) { m.print(*m.out, io); });
  m.out->flush();
}

void Snooper::stop() { impl_->tracer->stop(); }

void Snooper::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    m.tracer->flush([&](const block::Io& io) { m.print(out, io); });
    out.flush();
  }
  session::report_lost(err, m.tracer->dropped(), m.o.duration.has_value());
  if (uint64_t r = m.tracer->stats().resets)
    err << "iosnoop: I/O pairing started afresh " << r << " time" << (r == 1 ? "" : "s")
        << " after lost events: I/O in flight then is not shown.\n";
}

uint64_t Snooper::printed() const { return impl_->printed; }

}  // namespace tracekit::iosnoop
