#include "stacksnoop/stacksnoop.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "ftrace/reader.hpp"
#include "output/snoop.hpp"
#include "probe/spec.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "session/entry_frame.hpp"
#include "symbols/kallsyms.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"

namespace tracekit::stacksnoop {

struct Snooper::Impl {
  Options o;
  std::ostream* out = nullptr;
  std::optional<session::TraceSession> trace;
  session::FtraceCapture* capture = nullptr;  // trace's reader
  symbols::KernelSymbols ksyms;
  // Names as the kernel recorded them (saved_cmdlines), then /proc: a task
  // that has exited by the time its event is printed is still named.
  std::optional<session::SavedComms> saved_comms;
  std::unordered_map<int, std::string> comms;
  std::vector<report::Frame> frames;
  // The events of kprobes at functions' entries: their stacks get the
  // probed function where the unwinder left it out (stackcount/entry_frame).
  std::unordered_set<int> entry_kprobes;
  int function_event = -1;  // ftrace:function's id, with the function tracer
  std::vector<uint64_t> entry_frame;
  uint64_t read = 0;
  uint64_t printed = 0;        // events known to have reached out's reader
  std::vector<uint64_t> ends;  // since out's last good flush: where each event's text ends

  std::string_view comm(int pid) {
    if (pid == 0) return "<idle>";
    auto it = comms.find(pid);
    if (it != comms.end()) return it->second;
    return comms.emplace(pid, (*saved_comms)(pid)).first->second;
  }

  void print(const ftrace::Event& e, std::ostream& out) {
    ++read;
    if (!out) return;
    frames.clear();
    std::span<const uint64_t> stack;
    if (entry_kprobes.contains(e.type)) {
      stack = stackcount::with_probed_function(e.stack, stackcount::kprobe_ip(e.data), ksyms,
                                               entry_frame);
    } else if (e.type == function_event) {
      auto f = stackcount::function_entry(e.data);
      stack = stackcount::with_probed_function(e.stack, f.ip, ksyms, entry_frame, f.parent_ip);
    } else {
      stack = stackcount::with_probed_function(e.stack, 0, ksyms, entry_frame);
    }
    for (size_t i = 0; i < stack.size(); ++i) {
      report::Frame f;
      f.addr = stack[i];
      if (auto r = ksyms.lookup(stack[i], i > 0)) {
        f.name = std::string(r->name);
        f.offset = r->offset;
      }
      frames.push_back(std::move(f));
    }
    output::SnoopEvent ev{e.ts, comm(e.pid), e.pid, e.cpu, &frames};
    output::snoop_event(out, ev, o.verbose, o.offset);
    auto end = out.tellp();
    std::streamoff off = end;
    ends.push_back(off < 0 ? UINT64_MAX : static_cast<uint64_t>(off));
  }

  void flush(std::ostream& out) {
    out.flush();
    if (!out) return;  // ends stay, for unprinted() to weigh
    printed += ends.size();
    ends.clear();
  }
};

Snooper::Snooper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Snooper::Snooper(Snooper&&) noexcept = default;
Snooper::~Snooper() = default;

Result<Snooper> Snooper::start(const Options& o, std::ostream& out, std::ostream& warn) {
  if (o.pid && !process_exists(*o.pid))
    return no_process_error(*o.pid);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto spec = probe::parse_spec(o.spec);
  if (!spec) return spec.error();
  probe::ExpandOptions eo;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) return targets.error();
  if (targets->empty())
    return Error{0, "\"" + o.spec + "\" not found", {},
                 "see available_events, /proc/kallsyms or the binary's symbols"};

  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->out = &out;
  impl->saved_comms.emplace(*dir);
  auto k = symbols::KernelSymbols::load();
  if (k)
    impl->ksyms = std::move(*k);
  else
    warn << "stacksnoop: kernel symbols unavailable: " << k.error().str() << "\n";
  auto trace = session::TraceSession::create(*dir, "stacksnoop", *targets,
                                             /*function_tracer=*/true, warn);
  if (!trace) return trace.error();
  impl->trace.emplace(std::move(*trace));

  session::CaptureOptions co;
  co.pid = o.pid;
  if (o.buffered_secs) co.buffer_kb = kBufferedKb;
  // Kprobes' stacks from the stacktrace option, unwound from the probe's
  // registers (a trigger's are not, and were empty or wrong on 4.4 and
  // 4.14: see stackcount's start).
  co.stack_option = std::any_of(targets->begin(), targets->end(), [](const probe::Target& t) {
    return t.kind == probe::Kind::kKernel;
  });
  if (auto st = impl->trace->read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->trace->ftrace();
  impl->entry_kprobes = stackcount::entry_kprobe_ids(impl->trace->probes(), *targets);
  if (!impl->trace->probes().functions().empty())
    impl->function_event = stackcount::function_event_id(*dir);
  return Snooper(std::move(impl));
}

void Snooper::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.print(e, *m.out); });
  m.flush(*m.out);
}

void Snooper::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

std::string Snooper::header() const {
  std::ostringstream h;
  output::snoop_header(h, impl_->o.verbose);
  return h.str();
}

void Snooper::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  // A first stop signal ends the tracing, and what was read is still printed
  // (to a slow reader too: cli::StdoutGuard retries the write it cut short);
  // a failed write or a second signal ends the printing. After a failed
  // write the rest is still read, to count it.
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    if (m.o.buffered_secs && out) out << header();
    m.capture->flush([&](const ftrace::Event& e) { m.print(e, out); });
    m.flush(out);
  }
  // The cause follows from cli::StdoutGuard::finish, except for a closed
  // pipe, which is no error.
  if (uint64_t n = unprinted(cli::output_written()))
    err << "stacksnoop: " << n << " of the " << read() << " events read were not printed"
        << (cli::output_error() == EPIPE ? ": stdout was closed" : "") << ".\n";
  session::report_lost(err, dropped(), m.o.buffered_secs.has_value());
  if (uint64_t n = m.capture->reader().unpaired(); n && m.capture->reader().dropped())
    err << "stacksnoop: " << n << (n == 1 ? " event was" : " events were")
        << " printed without a stack: the buffer filled between the event and its stack.\n";
}

uint64_t Snooper::dropped() const { return impl_->capture->lost_events(); }

uint64_t Snooper::read() const { return impl_->read; }

uint64_t Snooper::unprinted(uint64_t delivered) const {
  const Impl& m = *impl_;
  uint64_t printed = m.printed;
  for (uint64_t end : m.ends)
    if (end <= delivered) ++printed;
  return m.read - printed;
}

}  // namespace tracekit::stacksnoop
