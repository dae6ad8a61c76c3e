#include "tcpretrans/tcpretrans.hpp"

#include <traceevent/event-parse.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "tcpretrans/render.hpp"
#include "session/trace_session.hpp"
#include "symbols/kallsyms.hpp"
#include "tcpretrans/decode.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::tcpretrans {

namespace {

constexpr const char* kRetransmitFunction = "tcp_retransmit_skb";
constexpr const char* kLossProbeFunction = "tcp_send_loss_probe";

probe::Target kprobe_on(const char* function) {
  probe::Target t;
  t.kind = probe::Kind::kKernel;
  t.function = function;
  t.event_name = function;
  t.fetchargs = kprobe_fetchargs("$arg1");
  return t;
}

std::string time_of_day() {
  char buf[16];
  std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
  return buf;
}

}  // namespace

Result<std::vector<probe::Target>> targets(const Options& o, kernel::Features& features,
                                           Path* path) {
  using kernel::Feature;
  std::vector<probe::Target> t;
  if (features.has(Feature::kTcpRetransmitTracepoint)) {
    probe::Target tp;
    tp.kind = probe::Kind::kTracepoint;
    tp.system = "tcp";
    tp.event = "tcp_retransmit_skb";
    t.push_back(tp);
    *path = Path::kTracepoint;
  } else if (features.has(Feature::kKprobes)) {
    t.push_back(kprobe_on(kRetransmitFunction));
    *path = Path::kKprobe;
  } else {
    Error tp = features.missing(Feature::kTcpRetransmitTracepoint);
    Error kp = features.missing(Feature::kKprobes);
    return Error{0, tp.message + ", and " + kp.message, {}, tp.hint + "; " + kp.hint};
  }
  if (o.loss_probes) {
    if (!features.has(Feature::kKprobes)) {
      Error kp = features.missing(Feature::kKprobes);
      return Error{0,
                   "-l traces tail loss probes with a kprobe on " +
                       std::string(kLossProbeFunction) + ", and " + kp.message,
                   {},
                   kp.hint + "; or trace retransmits only (no -l)"};
    }
    t.push_back(kprobe_on(kLossProbeFunction));
  }
  return t;
}

Status check_functions(const std::vector<probe::Target>& targets,
                       const std::function<bool(std::string_view)>& has) {
  auto missing = [](const std::string& f) {
    return Error{0,
                 "this kernel has no " + f +
                     " (not in /proc/kallsyms): it was built without TCP (CONFIG_INET)",
                 {},
                 "tcpretrans needs a kernel with CONFIG_INET and either kprobes or the "
                 "tcp:tcp_retransmit_skb tracepoint (Linux 4.15+)"};
  };
  // The tracepoint too: 4.19 without CONFIG_INET has tcp:tcp_retransmit_skb
  // (net/core defines the tcp events under CONFIG_NET) but no TCP to fire it.
  if (!has(kRetransmitFunction)) return missing(kRetransmitFunction);
  for (const auto& t : targets)
    if (t.kind == probe::Kind::kKernel && !has(t.function)) return missing(t.function);
  return {};
}

struct Tracer::Impl {
  Options o;
  Path path = Path::kTracepoint;
  std::ostream* out = nullptr;
  std::optional<session::TraceSession> trace;
  session::FtraceCapture* capture = nullptr;
  std::unordered_map<int, Decoder> decoders;  // by event id
  symbols::KernelSymbols ksyms;
  std::vector<Retransmit> batch;
  uint64_t printed = 0;

  void collect(const ftrace::Event& e) {
    auto d = decoders.find(e.type);
    if (d == decoders.end()) return;
    auto r = d->second.decode(e.data);
    if (!r) return;
    r->ts = e.ts;
    r->pid = e.pid;
    if (e.has_stack) r->stack.assign(e.stack.begin(), e.stack.end());
    batch.push_back(std::move(*r));
  }

  std::vector<std::string> frames(const std::vector<uint64_t>& stack) const {
    std::vector<std::string> names;
    for (size_t i = 0; i < stack.size(); ++i) {
      auto s = ksyms.lookup(stack[i], i > 0);
      if (s) {
        std::string name(s->name);
        if (!s->module.empty()) name += " [" + std::string(s->module) + "]";
        names.push_back(std::move(name));
      } else {
        char buf[32];
        std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(stack[i]));
        names.emplace_back(buf);
      }
    }
    return names;
  }

  // Prints the batch (in time order: the reader merges the CPUs), stamped
  // with the time of day now.
  void print_batch(std::ostream& to) {
    const std::string now = time_of_day();
    for (const auto& r : batch) {
      if (!to) break;
      const std::string local = endpoint(r.ipv6, r.saddr, r.sport);
      const std::string remote = endpoint(r.ipv6, r.daddr, r.dport);
      const std::string state = state_name(r.state);
      std::vector<std::string> stack;
      if (o.stacks) stack = frames(r.stack);
      output::retransmit_line(
          to, {now, r.pid, r.loss_probe, local, remote, state, o.stacks ? &stack : nullptr});
      ++printed;
    }
    batch.clear();
    to.flush();
  }
};

Tracer::Tracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer::~Tracer() = default;

Result<Tracer> Tracer::start(const Options& o, std::ostream& out, std::ostream& warn) {
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->out = &out;
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto t = targets(o, kernel::Features::host(), &impl->path);
  if (!t) return t.error();
  if (auto st = check_functions(*t, [](std::string_view f) { return symbols::kernel_has_text_symbol({f}); }); !st) return st.error();
  if (o.stacks) {
    auto k = symbols::KernelSymbols::load();
    if (!k) return k.error();
    impl->ksyms = std::move(*k);
  }
  auto trace =
      session::TraceSession::create(*dir, "tcpretrans", *t, /*function_tracer=*/false, warn);
  if (!trace) return trace.error();
  // Every target is needed: a skipped one is an error here.
  if (trace->probes().events().size() != t->size())
    return Error{0, "cannot probe " + trace->probes().skipped().front(), {}, {}};
  impl->trace.emplace(std::move(*trace));
  session::CaptureOptions co;
  co.stacks = o.stacks;
  co.time_ordered = true;
  if (auto st = impl->trace->read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->trace->ftrace();

  tep_handle* tep = impl->capture->reader().tep();
  for (const auto& ev : impl->trace->probes().events()) {
    tep_event* te = tep_find_event(tep, ev.id);
    if (!te) return Error{0, "no format for " + ev.system + ":" + ev.event, {}, {}};
    const bool kprobe = ev.target == kRetransmitFunction || ev.target == kLossProbeFunction;
    auto d = Decoder::make(
        [te](const char* name) -> const tep_format_field* { return tep_find_field(te, name); },
        kprobe ? Source::kKprobe : Source::kTracepoint, ev.target == kLossProbeFunction);
    if (!d) {
      Error e = d.error();
      e.message = ev.system + ":" + ev.event + ": " + e.message;
      return e;
    }
    impl->decoders.emplace(ev.id, std::move(*d));
  }
  warn << "tcpretrans: retransmits from "
       << (impl->path == Path::kTracepoint ? "the tcp:tcp_retransmit_skb tracepoint"
                                           : "a kprobe on tcp_retransmit_skb")
       << (o.loss_probes ? ", tail loss probes from a kprobe on tcp_send_loss_probe" : "") << "\n";
  return Tracer(std::move(impl));
}

void Tracer::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.collect(e); });
  m.print_batch(*m.out);
}

void Tracer::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

void Tracer::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    m.capture->flush([&](const ftrace::Event& e) { m.collect(e); });
    m.print_batch(out);
  }
  session::report_lost(err, m.capture->reader().dropped(), false);
}

Path Tracer::path() const { return impl_->path; }
uint64_t Tracer::printed() const { return impl_->printed; }

}  // namespace tracekit::tcpretrans
