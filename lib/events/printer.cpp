#include "events/printer.hpp"

#include <algorithm>
#include <csignal>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cli/signals.hpp"
#include "output/event_text.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/user.hpp"
#include "tracefs/instance.hpp"
#include "util/strings.hpp"

namespace tracekit::events {

struct Printer::Impl {
  Options o;
  std::string tracing_dir;
  std::ostream* out = nullptr;
  std::optional<session::TraceSession> trace;
  session::FtraceCapture* capture = nullptr;  // trace's reader
  symbols::KernelSymbols ksyms;
  std::unique_ptr<symbols::UserSymbols> usyms;  // with user stacks
  std::optional<session::SavedComms> comms;
  std::optional<output::EventText> text;
  std::string header;  // the instance's trace file header, at the start
  // One read's events as text, and where each one's lines are in it.
  struct Line {
    uint64_t ts;
    size_t begin, end;
  };
  std::string batch;
  std::vector<Line> lines;
  std::string ordered;  // batch in timestamp order, when it was not
  uint64_t printed = 0;

  void collect(const ftrace::Event& e) {
    const size_t begin = batch.size();
    text->print(batch, e);
    lines.push_back({e.ts, begin, batch.size()});
  }

  // Prints the batch in timestamp order (each CPU's events come in order;
  // the CPUs are merged here), in one write.
  void print_batch(std::ostream& to) {
    auto earlier = [](const Line& a, const Line& b) { return a.ts < b.ts; };
    std::string_view all = batch;
    if (!std::is_sorted(lines.begin(), lines.end(), earlier)) {
      std::stable_sort(lines.begin(), lines.end(), earlier);
      ordered.clear();
      for (const Line& l : lines) ordered.append(batch, l.begin, l.end - l.begin);
      all = ordered;
    }
    if (to && !all.empty()) {
      to.write(all.data(), static_cast<std::streamsize>(all.size()));
      if (to) printed += lines.size();
    }
    batch.clear();
    lines.clear();
    to.flush();
  }
};

Printer::Printer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Printer::Printer(Printer&&) noexcept = default;
Printer::~Printer() = default;

Result<Printer> Printer::start(session::TraceSession trace, const Options& o, std::ostream& out,
                               std::ostream& warn) {
  const std::string tracing_dir = trace.tracing_dir();
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->tracing_dir = tracing_dir;
  impl->comms.emplace(tracing_dir);
  impl->out = &out;
  const bool symbols = o.stacks || o.kernel_addresses;
  if (symbols) {
    if (auto k = symbols::KernelSymbols::load())
      impl->ksyms = std::move(*k);
    else
      warn << o.tool << ": kernel symbols unavailable: " << k.error().str() << "\n";
  }
  impl->trace.emplace(std::move(trace));

  session::CaptureOptions co;
  co.pid = o.pid;
  co.tid = o.tid;
  co.filter = o.filter;
  co.stacks = o.stacks;
  co.stack_option = true;
  co.user_stacks = o.user_stacks;
  if (o.user_stacks) {
    impl->usyms = std::make_unique<symbols::UserSymbols>();
    // Buffered, the events are read at the end: the process may be gone by
    // then, so take its mappings now when it is known (frames of other
    // processes that exit first print as addresses, as the kernel's do).
    if (o.pid) impl->usyms->note_process(*o.pid);
  }
  if (o.buffered) co.buffer_kb = kBufferedKb;
  if (auto st = impl->trace->read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->trace->ftrace();
  impl->header = tracefs::trace_file_header(impl->capture->instance().path() + "/trace");
  const bool migrate = impl->header.find("migrate-disable") != std::string::npos;
  Impl* m = impl.get();
  impl->text.emplace(impl->capture->reader().tep(), [m](int pid) { return (*m->comms)(pid); },
                     symbols ? &impl->ksyms : nullptr, migrate,
                     o.kernel_addresses ? output::EventText::ProbeAddresses::kKernel
                     : o.user_addresses ? output::EventText::ProbeAddresses::kUser
                                        : output::EventText::ProbeAddresses::kAsFormatted,
                     impl->usyms.get(), impl->trace->probes().raw_syscalls());
  return Printer(std::move(impl));
}

std::string Printer::header() const { return impl_->header; }

void Printer::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.collect(e); });
  m.print_batch(*m.out);
}

void Printer::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

void Printer::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    if (m.o.buffered && m.o.headers) {
      // As the kernel's trace file shows it now, before it is read.
      std::string now = tracefs::trace_file_header(m.capture->instance().path() + "/trace");
      out << (now.empty() ? m.header : now);
    }
    m.capture->flush([&](const ftrace::Event& e) { m.collect(e); });
    m.print_batch(out);
  }
  session::report_lost(err, dropped(), m.o.buffered);
}

uint64_t Printer::printed() const { return impl_->printed; }
uint64_t Printer::dropped() const { return impl_->capture->reader().dropped(); }

}  // namespace tracekit::events
