#include "family/events/printer.hpp"

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
  std::string kept;  // print_upto's: the lines it keeps, then swapped in
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

  // Prints the batch's events at or before upto (all of them with
  // UINT64_MAX) in timestamp order and keeps the rest for later. The
  // reader hands out the CPUs' pages interleaved by time and says how far
  // every CPU has been read (ftrace::Reader::Progress), so the batch holds
  // a few pages' worth, not a pass: on a host where a page fault costs
  // tens of microseconds, a batch as big as the rings' text (three times
  // their size, touched afresh in the first passes) cost the first passes
  // more than the producers took to fill the rings again.
  void print_upto(std::ostream& to, uint64_t upto) {
    auto earlier = [](const Line& a, const Line& b) { return a.ts < b.ts; };
    if (!std::is_sorted(lines.begin(), lines.end(), earlier))
      std::stable_sort(lines.begin(), lines.end(), earlier);
    auto end = upto == UINT64_MAX
                   ? lines.end()
                   : std::upper_bound(lines.begin(), lines.end(), upto,
                                      [](uint64_t t, const Line& l) { return t < l.ts; });
    if (to && end != lines.begin()) {
      // Adjacent lines whose text is adjacent go in one write.
      size_t from = lines.begin()->begin, until = lines.begin()->end;
      for (auto l = lines.begin() + 1; l != end; ++l) {
        if (l->begin != until) {
          to.write(batch.data() + from, static_cast<std::streamsize>(until - from));
          from = l->begin;
        }
        until = l->end;
      }
      to.write(batch.data() + from, static_cast<std::streamsize>(until - from));
      if (to) printed += static_cast<uint64_t>(end - lines.begin());
    }
    if (end == lines.end()) {
      batch.clear();
      lines.clear();
    } else {
      kept.clear();
      auto out = lines.begin();
      for (auto l = end; l != lines.end(); ++l, ++out) {
        const size_t begin = kept.size();
        kept.append(batch, l->begin, l->end - l->begin);
        *out = {l->ts, begin, kept.size()};
      }
      lines.erase(out, lines.end());
      batch.swap(kept);
    }
    // Normally what is kept is a page or so per CPU. Should much more be
    // held back (a CPU's event waiting for its stack until the next pass),
    // the next try waits for the batch to double, not to grow by a chunk:
    // sorting and moving what is kept then costs as much as the batch.
    next_print = std::max(kChunk, 2 * batch.size());
  }

  // The reader's progress: prints what it can once the batch is big enough
  // to be worth a write.
  void progress(std::ostream& to, uint64_t upto) {
    if (batch.size() >= next_print) print_upto(to, upto);
  }
  static constexpr size_t kChunk = 256 * 1024;
  size_t next_print = kChunk;
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
  impl->batch.reserve(2 * Impl::kChunk);
  impl->kept.reserve(2 * Impl::kChunk);
  impl->lines.reserve(2 * Impl::kChunk / 32);
  impl->header = tracefs::trace_file_header(impl->capture->instance().path() + "/trace");
  const bool migrate = impl->header.find("migrate-disable") != std::string::npos;
  Impl* m = impl.get();
  impl->text.emplace(impl->capture->reader().tep(), [m](int pid) { return (*m->comms)(pid); },
                     symbols ? &impl->ksyms : nullptr, migrate,
                     o.kernel_addresses ? output::EventText::ProbeAddresses::kKernel
                     : o.user_addresses ? output::EventText::ProbeAddresses::kUser
                                        : output::EventText::ProbeAddresses::kAsFormatted,
                     impl->usyms.get(), impl->trace->probes().raw_syscalls());
  impl->text->set_pid_width(output::pid_width_of_header(impl->header));
  impl->tep = impl->capture->reader().tep();
  if (tep_event* user = tep_find_event_by_name(impl->tep, "ftrace", "user_stack"))
    if (tep_format_field* f = tep_find_field(user, "caller"); f && f->arraylen > 0)
      impl->user_entries = static_cast<size_t>(f->arraylen);
  return Printer(std::move(impl));
}

std::string Printer::header() const { return impl_->header; }

void Printer::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(
      timeout_ms, [&](const ftrace::Event& e) { m.collect(e); },
      [&](uint64_t upto) { m.progress(*m.out, upto); });
  m.print_upto(*m.out, UINT64_MAX);
  m.out->flush();
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
    m.capture->flush([&](const ftrace::Event& e) { m.collect(e); },
                     [&](uint64_t upto) { m.progress(out, upto); });
    m.print_upto(out, UINT64_MAX);
    out.flush();
  }
  session::report_lost(err, dropped(), m.o.buffered);
}

uint64_t Printer::printed() const { return impl_->printed; }
uint64_t Printer::dropped() const { return impl_->capture->reader().dropped(); }

}  // namespace tracekit::events
