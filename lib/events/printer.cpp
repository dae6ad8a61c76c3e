#include "events/printer.hpp"

#include <algorithm>
#include <csignal>
#include <ostream>
#include <sstream>
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
  std::vector<std::pair<uint64_t, std::string>> batch;
  uint64_t printed = 0;


  std::ostringstream line;  // reused: one event's text at a time

  void collect(const ftrace::Event& e) {
    line.str(std::string());
    text->print(line, e);
    batch.emplace_back(e.ts, line.str());
  }

  // Prints the batch in timestamp order (each CPU's events come in order;
  // the CPUs are merged here).
  void print_batch(std::ostream& to) {
    std::stable_sort(batch.begin(), batch.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [ts, line] : batch) {
      if (!to) break;
      to << line;
      ++printed;
    }
    batch.clear();
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
