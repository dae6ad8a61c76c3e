#include "opensnoop/opensnoop.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "output/snoop.hpp"
#include "probe/match.hpp"
#include "session/saved_comms.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::opensnoop {

std::vector<session::SyscallString> open_calls() {
  return {{"openat", 1, "filename"}, {"open", 0, "filename"}};
}

struct Snooper::Impl {
  Options o;
  std::ostream* out = nullptr;
  std::string tracing_dir;
  std::optional<session::SyscallStrings> strings;
  session::FtraceCapture* capture = nullptr;
  std::optional<probe::Matcher> name, file;
  std::optional<session::SavedComms> comms;  // when the probe could not fetch $comm
  std::vector<session::SyscallCall> batch;
  uint64_t printed = 0;

  void collect(const ftrace::Event& e) {
    auto c = strings->push(e);
    if (!c) return;
    if (o.failed_only && c->ret >= 0) return;
    if (c->comm.empty()) c->comm = (*comms)(c->tid);
    if (name && !(*name)(c->comm)) return;
    if (file && !(*file)(c->str)) return;
    batch.push_back(std::move(*c));
  }

  // Prints the batch (in time order: the reader merges the CPUs).
  void print_batch(std::ostream& to) {
    for (const auto& c : batch) {
      if (!to) break;
      output::open_event(to, {c.ts, c.comm, c.tid, c.ret, c.str}, o.timestamps);
      ++printed;
    }
    batch.clear();
    to.flush();
  }
};

Snooper::Snooper(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Snooper::Snooper(Snooper&&) noexcept = default;
Snooper::~Snooper() = default;

Result<Snooper> Snooper::start(const Options& o, std::ostream& out, std::ostream& warn) {
  auto impl = std::make_unique<Impl>();
  impl->o = o;
  impl->out = &out;
  auto name_re = probe::Matcher::optional_regex(o.name);
  if (!name_re) return name_re.error();
  impl->name = std::move(*name_re);
  auto file_re = probe::Matcher::optional_regex(o.filename);
  if (!file_re) return file_re.error();
  impl->file = std::move(*file_re);
  if (o.pid && !process_exists(*o.pid))
    return no_process_error(*o.pid);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  impl->tracing_dir = *dir;
  impl->comms.emplace(*dir);
  auto strings = session::SyscallStrings::create(*dir, "opensnoop", open_calls(),
                                                 kernel::Features::host(), warn);
  if (!strings) return strings.error();
  impl->strings.emplace(std::move(*strings));
  warn << "opensnoop: file names from " << impl->strings->how() << "\n";
  if (impl->strings->path() == session::StringPath::kUprobe)
    warn << "opensnoop: programs that open files without this C library (static or Go "
            "programs, the dynamic loader's own opens) are missed\n";

  session::CaptureOptions co;
  co.pid = o.pid;
  co.tid = o.tid;
  co.stacks = false;
  // An open's entry and exit may be read from two CPUs (the thread moved).
  co.time_ordered = true;
  // Not our own opens: reading saved_cmdlines would trace itself.
  co.filter = "common_pid != " + std::to_string(getpid());
  if (o.buffered_secs) co.buffer_kb = kBufferedKb;
  if (auto st = impl->strings->trace().read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->strings->trace().ftrace();
  if (auto st = impl->strings->attach(impl->capture->reader().tep()); !st) return st.error();
  return Snooper(std::move(impl));
}

std::string Snooper::header() const {
  std::ostringstream h;
  output::open_header(h, impl_->o.timestamps);
  return h.str();
}

session::StringPath Snooper::path() const { return impl_->strings->path(); }
const std::string& Snooper::how() const { return impl_->strings->how(); }

void Snooper::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.collect(e); });
  m.print_batch(*m.out);
}

void Snooper::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

void Snooper::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    m.capture->flush([&](const ftrace::Event& e) { m.collect(e); });
    m.print_batch(out);
  }
  session::report_lost(err, dropped(), m.o.buffered_secs.has_value());
  // Opens whose return was seen without their entry: not printed, but
  // said, since on the uprobe path they are what it cannot see.
  if (uint64_t n = m.strings->unpaired())
    err << "opensnoop: " << n << " open" << (n == 1 ? "" : "s")
        << " returned without a file name seen"
        << (path() == session::StringPath::kUprobe
                ? " (made without the C library's wrappers, or begun before tracing)"
                : " (begun before tracing, or their entry lost)")
        << "; not printed.\n";
}

uint64_t Snooper::printed() const { return impl_->printed; }
uint64_t Snooper::dropped() const { return impl_->capture->reader().dropped(); }

}  // namespace tracekit::opensnoop
