#include "events/printer.hpp"

#include <algorithm>
#include <csignal>
#include <ostream>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <traceevent/event-parse.h>

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
  uint64_t printed = 0;
  // Options::caller_field: its field in each event type seen (null where the
  // type has none), the user stack record's length, and a stack with it.
  tep_handle* tep = nullptr;
  std::unordered_map<int, tep_format_field*> caller_fields;
  size_t user_entries = 8;
  std::vector<uint64_t> frames;

  tep_format_field* caller_field(int type) {
    auto [at, added] = caller_fields.try_emplace(type, nullptr);
    if (added)
      if (tep_event* ev = tep_find_event(tep, type))
        at->second = tep_find_field(ev, o.caller_field.c_str());
    return at->second;
  }

  void collect(const ftrace::Event& e) {
    const size_t begin = batch.size();
    tep_format_field* caller = o.caller_field.empty() ? nullptr : caller_field(e.type);
    if (!caller) {
      text->print(batch, e);
    } else {
      ftrace::Event with = e;
      unsigned long long ret = 0;
      if (e.has_user_stack &&
          static_cast<size_t>(caller->offset) + static_cast<size_t>(caller->size) <= e.data.size() &&
          tep_read_number_field(caller, e.data.data(), &ret) == 0) {
        with_caller(e.user_stack, ret, user_entries, frames);
        with.user_stack = frames;
      }
      text->print(batch, with);
      drop_last_argument(batch, begin, o.caller_field);
    }
    lines.push_back({e.ts, begin, batch.size()});
  }

  // Prints the batch in timestamp order (each CPU's events come in order;
  // the CPUs are merged here): in one write when it is in order, else line
  // by line into the stream's buffer (no ordered copy of the batch: on a
  // host where a page fault costs tens of microseconds, a first pass of two
  // full buffers spent more in faulting in that copy than the producers
  // took to fill the buffers again).
  void print_batch(std::ostream& to) {
    auto earlier = [](const Line& a, const Line& b) { return a.ts < b.ts; };
    if (to && !lines.empty()) {
      if (std::is_sorted(lines.begin(), lines.end(), earlier)) {
        to.write(batch.data(), static_cast<std::streamsize>(batch.size()));
      } else {
        std::stable_sort(lines.begin(), lines.end(), earlier);
        for (const Line& l : lines)
          to.write(batch.data() + l.begin, static_cast<std::streamsize>(l.end - l.begin));
      }
      if (to) printed += lines.size();
    }
    batch.clear();
    lines.clear();
    to.flush();
  }
};

void with_caller(std::span<const uint64_t> stack, uint64_t caller, size_t max,
                 std::vector<uint64_t>& out) {
  out.assign(stack.begin(), stack.end());
  if (out.empty() || caller == 0 || (out.size() > 1 && out[1] == caller)) return;
  out.insert(out.begin() + 1, caller);
  if (out.size() > std::max<size_t>(max, 2)) out.resize(std::max<size_t>(max, 2));
}

void drop_last_argument(std::string& text, size_t begin, std::string_view name) {
  size_t end = text.find('\n', begin);
  if (end == std::string::npos) end = text.size();
  if (end == begin) return;
  const size_t at = text.rfind(' ', end - 1);  // before the last argument
  if (at == std::string::npos || at < begin || end - at < name.size() + 2 ||
      text.compare(at + 1, name.size(), name) != 0 || text[at + 1 + name.size()] != '=')
    return;
  text.erase(at, end - at);
}

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
  // Room for a whole pass at once (address space only: the pages are
  // touched as text fills them), so the first passes, which meet full
  // buffers, do not grow the batch by doubling, touching twice what they
  // keep. Text is about three bytes per byte of record; a line per 32
  // bytes. A pass counts as 64 MiB at most (buffered mode's 8 MiB buffers on
  // many CPUs).
  const size_t pass = std::min(impl->capture->reader().max_poll_bytes(), size_t{64} << 20);
  impl->batch.reserve(3 * pass);
  impl->lines.reserve(pass / 32);
  impl->header = tracefs::trace_file_header(impl->capture->instance().path() + "/trace");
  const bool migrate = impl->header.find("migrate-disable") != std::string::npos;
  Impl* m = impl.get();
  impl->text.emplace(impl->capture->reader().tep(), [m](int pid) { return (*m->comms)(pid); },
                     symbols ? &impl->ksyms : nullptr, migrate,
                     o.kernel_addresses ? output::EventText::ProbeAddresses::kKernel
                     : o.user_addresses ? output::EventText::ProbeAddresses::kUser
                                        : output::EventText::ProbeAddresses::kAsFormatted,
                     impl->usyms.get(), impl->trace->probes().raw_syscalls());
  impl->tep = impl->capture->reader().tep();
  if (tep_event* user = tep_find_event_by_name(impl->tep, "ftrace", "user_stack"))
    if (tep_format_field* f = tep_find_field(user, "caller"); f && f->arraylen > 0)
      impl->user_entries = static_cast<size_t>(f->arraylen);
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
