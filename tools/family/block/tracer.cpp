#include "family/block/tracer.hpp"

#include <cerrno>
#include <ostream>
#include <vector>

#include "session/trace_session.hpp"
#include "tracefs/filter.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::block {

Result<std::string> iotype_filter(const std::string& glob) {
  if (glob.empty() || glob.find_first_of("\"\\\n") != std::string::npos)
    return Error{EINVAL,
                 "invalid I/O type \"" + glob + "\"",
                 {},
                 "give a glob on the rwbs field, e.g. '*R*' or 'W*'"};
  return "rwbs ~ \"" + glob + "\"";
}

struct Tracer::Impl {
  TraceOptions o;
  std::optional<session::TraceSession> session;
  std::optional<Decoder> decoder;
  Pairer pairer{false};
  uint64_t lost = 0;
  std::vector<Event> batch;

  void collect(const ftrace::Event& e) {
    if (auto b = decoder->decode(e.type, e.ts, e.pid, e.data)) batch.push_back(std::move(*b));
  }
  void pair(const Pairer::Done& done) {
    const uint64_t now = session->ftrace()->reader().dropped();
    if (now != lost) {
      lost = now;
      pairer.reset();
    }
    pairer.feed(std::move(batch), kept(done));
    batch.clear();
  }
  // With -Q -p, the issues of every task are traced (the I/O another task
  // inserted): the finished I/O of other tasks are dropped here.
  Pairer::Done kept(const Pairer::Done& done) const {
    return [&done, pid = o.pid](const Io& io) {
      if (!pid || io.pid == *pid) done(io);
    };
  }
};

Tracer::Tracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer::~Tracer() = default;

Result<Tracer> Tracer::start(const std::string& tool, const TraceOptions& o, std::ostream& warn) {
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->pairer = Pairer(o.queue);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();

  std::vector<Kind> kinds{Kind::kIssue, Kind::kRequeue, Kind::kComplete};
  if (o.queue) kinds.insert(kinds.begin(), Kind::kInsert);
  std::vector<probe::Target> targets;
  std::vector<std::pair<Kind, tracefs::EventFormat>> formats;
  for (Kind k : kinds) {
    auto fmt = tracefs::EventFormat::load(*dir, "block", event_name(k));
    if (!fmt) {
      if (k == Kind::kRequeue) continue;  // without it, requeued I/Os start again
      Error e = fmt.error();
      e.hint = "this kernel has no block tracepoints (CONFIG_BLOCK and CONFIG_TRACEPOINTS)";
      return e;
    }
    probe::Target t;
    t.kind = probe::Kind::kTracepoint;
    t.system = "block";
    t.event = event_name(k);
    targets.push_back(t);
    formats.emplace_back(k, std::move(*fmt));
  }
  auto decoder = Decoder::make(std::move(formats));
  if (!decoder) return decoder.error();
  impl->decoder.emplace(std::move(*decoder));

  session::CaptureOptions co;
  co.stacks = false;
  co.buffer_kb = o.buffer_kb;
  if (!o.iotype.empty()) {
    auto f = iotype_filter(o.iotype);
    if (!f) return f.error();
    co.filter = *f;
  }
  if (!o.device.empty()) {
    auto dev = parse_device(o.device);
    if (!dev) return dev.error();
    if (auto st = check_request_queue(*dev, o.device); !st) return st.error();
    co.filter = tracefs::join_filters(co.filter, "dev == " + std::to_string(*dev));
  }
  // -p in the kernel on the start event; with -Q the issue of an I/O
  // another task inserted must still be seen: the insert only, and the
  // finished I/Os are checked here too.
  if (o.pid)
    co.event_filters[std::string("block:") + event_name(o.queue ? Kind::kInsert : Kind::kIssue)] =
        "common_pid == " + std::to_string(*o.pid);

  auto s = session::TraceSession::create(*dir, tool, targets, false, warn);
  if (!s) return s.error();
  impl->session.emplace(std::move(*s));
  if (auto st = impl->session->read_with_ftrace(co, warn); !st) return st.error();
  return Tracer(std::move(impl));
}

void Tracer::poll(int timeout_ms, const Pairer::Done& done) {
  Impl& m = *impl_;
  m.session->ftrace()->poll(timeout_ms, [&](const ftrace::Event& e) { m.collect(e); });
  m.pair(done);
}

void Tracer::stop() { (void)impl_->session->ftrace()->instance().set_tracing_on(false); }

void Tracer::flush(const Pairer::Done& done) {
  Impl& m = *impl_;
  m.session->ftrace()->flush([&](const ftrace::Event& e) { m.collect(e); });
  m.pair(done);
  m.pairer.finish(m.kept(done));
}

uint64_t Tracer::dropped() const { return impl_->session->ftrace()->reader().dropped(); }
const PairStats& Tracer::stats() const { return impl_->pairer.stats(); }

}  // namespace tracekit::block
