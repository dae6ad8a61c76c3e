#include "execsnoop/execsnoop.hpp"

#include <traceevent/event-parse.h>

#include <algorithm>
#include <csignal>
#include <iterator>
#include <ostream>
#include <sstream>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "execsnoop/render.hpp"
#include "probe/match.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::execsnoop {

std::vector<session::SyscallString> exec_calls(int max_args) {
  return {{"execve", 1, "argv", max_args + 1}, {"execveat", 2, "argv", max_args + 1}};
}

std::string args_text(const std::vector<std::string>& argv, int max) {
  std::string s;
  for (size_t i = 0; i < argv.size() && i < static_cast<size_t>(max); ++i)
    s += (i ? " " : "") + argv[i];
  if (argv.size() > static_cast<size_t>(max)) s += " [...]";
  return s;
}

std::vector<std::string> cmdline_args(std::string_view cmdline) {
  std::vector<std::string> args;
  while (!cmdline.empty()) {
    auto end = cmdline.find('\0');
    args.emplace_back(cmdline.substr(0, end));
    if (end == std::string_view::npos) break;
    cmdline.remove_prefix(end + 1);
  }
  return args;
}

std::string process_name(std::string_view filename) {
  auto slash = filename.rfind('/');
  return std::string(slash == std::string_view::npos ? filename : filename.substr(slash + 1));
}

void Lineage::fork(int parent, int child) {
  if (parent_.size() >= kMaxTracked) parent_.clear();
  parent_[child] = parent;
  execed_.erase(child);  // a new process with a reused PID
}

std::optional<int> Lineage::parent(int pid) const {
  auto it = parent_.find(pid);
  if (it == parent_.end()) return std::nullopt;
  return it->second;
}

bool Lineage::first_exec(int pid, bool reexecs) {
  if (execed_.size() >= kMaxTracked) execed_.clear();
  bool first = execed_.insert(pid).second;
  return first || reexecs;
}

namespace {

// The parent of a live process (/proc/PID/status "PPid:"), or nullopt.
std::optional<int> ppid_from_proc(int pid) {
  auto status = read_file("/proc/" + std::to_string(pid) + "/status");
  if (!status) return std::nullopt;
  auto at = status->find("\nPPid:");
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(*status).substr(at + 6);
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  return parse_int<int>(rest.substr(0, rest.find('\n')));
}

// An event copied out of the ring, to be handled after the poll's others.
struct Copied {
  ftrace::Event e;
  std::vector<uint8_t> data;
  bool waited = false;  // an exec that has waited one poll for its entry
};

Copied copy_of(const ftrace::Event& e) {
  Copied c;
  c.e = e;
  c.data.assign(e.data.begin(), e.data.end());
  return c;
}

}  // namespace

struct Snooper::Impl {
  Options o;
  std::ostream* out = nullptr;
  std::optional<session::SyscallStrings> strings;
  std::optional<session::TraceSession> bare;  // no probe reads arguments: the tracepoints alone
  session::FtraceCapture* capture = nullptr;
  std::optional<probe::Matcher> name;
  int exec_id = -1, fork_id = -1;
  const tep_format_field *exec_file = nullptr, *exec_pid = nullptr, *exec_old_pid = nullptr;
  const tep_format_field *fork_parent = nullptr, *fork_child = nullptr;
  Lineage lineage;
  std::vector<Copied> batch, waiting;
  uint64_t printed = 0, from_proc = 0, unknown = 0;

  session::TraceSession& trace() { return strings ? strings->trace() : *bare; }

  Status attach(tep_handle* tep) {
    if (strings)
      if (auto st = strings->attach(tep); !st) return st;
    for (const auto& ev : trace().probes().events()) {
      if (ev.system != "sched") continue;
      tep_event* te = tep_find_event(tep, ev.id);
      if (!te) return Error{0, "no format loaded for sched:" + ev.event, {}, {}};
      if (ev.event == "sched_process_exec") {
        exec_id = ev.id;
        exec_file = tep_find_field(te, "filename");
        exec_pid = tep_find_field(te, "pid");
        exec_old_pid = tep_find_field(te, "old_pid");
      } else if (ev.event == "sched_process_fork") {
        fork_id = ev.id;
        fork_parent = tep_find_field(te, "parent_pid");
        fork_child = tep_find_field(te, "child_pid");
      }
    }
    if (exec_id < 0 || !exec_file || !exec_pid || !exec_old_pid)
      return Error{0, "sched:sched_process_exec lacks its filename, pid or old_pid", {}, {}};
    if (fork_id < 0 || !fork_parent || !fork_child)
      return Error{0, "sched:sched_process_fork lacks its parent_pid or child_pid", {}, {}};
    return {};
  }

  static int number(const tep_format_field* f, const ftrace::Event& e) {
    unsigned long long v = 0;
    if (tep_read_number_field(const_cast<tep_format_field*>(f), e.data.data(), &v) != 0) return 0;
    return static_cast<int>(v);
  }

  // Handles the batch in time order; last: no exec waits for a later poll.
  // An exec that waits for its entry holds back every later event with it,
  // so that lines stay in time order and an entry still on its way is seen
  // before the events that follow it.
  void handle_batch(bool last) {
    for (auto& w : waiting) w.waited = true;
    for (auto& w : waiting) batch.push_back(std::move(w));
    waiting.clear();
    std::stable_sort(batch.begin(), batch.end(),
                     [](const Copied& a, const Copied& b) { return a.e.ts < b.e.ts; });
    for (size_t i = 0; i < batch.size() && *out; ++i) {
      Copied& c = batch[i];
      c.e.data = c.data;
      if (c.e.type == fork_id) {
        lineage.fork(number(fork_parent, c.e), number(fork_child, c.e));
      } else if (c.e.type == exec_id) {
        if (!exec(c, last)) {
          std::move(batch.begin() + static_cast<ptrdiff_t>(i), batch.end(),
                    std::back_inserter(waiting));
          break;
        }
      } else if (strings) {
        (void)strings->push(c.e);  // entries, and exits that end failed execs
      }
    }
    batch.clear();
    out->flush();
  }

  // Prints the exec of c, or returns false to wait for its entry.
  bool exec(const Copied& c, bool last) {
    const int pid = number(exec_pid, c.e), old_pid = number(exec_old_pid, c.e);
    std::optional<session::SyscallCall> entry;
    if (strings) {
      entry = strings->take(old_pid);
      if (!entry && !last && !c.waited) return false;
    }
    std::string file = session::read_string(exec_file, c.e.data).value_or("");
    if (name && !(*name)(process_name(file))) return true;
    // After the name: a program that another one (not shown) execs in its
    // own process is the first shown there.
    if (!lineage.first_exec(pid, o.reexecs)) return true;
    std::string args;
    if (entry && !entry->argv.empty()) {
      args = args_text(entry->argv, o.max_args);
    } else if (auto cmdline = read_file("/proc/" + std::to_string(pid) + "/cmdline");
               cmdline && !cmdline->empty()) {
      args = args_text(cmdline_args(*cmdline), o.max_args) + " [proc]";
      ++from_proc;
    } else {
      args = file + " [?]";
      ++unknown;
    }
    auto ppid = lineage.parent(pid);
    if (!ppid) ppid = ppid_from_proc(pid);
    output::exec_event(*out, {c.e.ts, pid, ppid.value_or(0), args}, o.timestamps);
    ++printed;
    return true;
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
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  std::vector<probe::Target> sched;
  for (const char* ev : {"sched_process_exec", "sched_process_fork"}) {
    probe::Target t;
    t.kind = probe::Kind::kTracepoint;
    t.system = "sched";
    t.event = ev;
    sched.push_back(std::move(t));
  }
  auto strings = session::SyscallStrings::create(*dir, "execsnoop", exec_calls(o.max_args),
                                                 kernel::Features::host(), warn, sched);
  if (strings) {
    impl->strings.emplace(std::move(*strings));
    warn << "execsnoop: arguments from " << impl->strings->how() << "\n";
    if (impl->strings->path() == session::StringPath::kUprobe)
      warn << "execsnoop: programs that exec without this C library (static or Go programs) "
              "are seen without arguments: shown from /proc/PID/cmdline while the process "
              "lives, marked [proc], else as the file name, marked [?]\n";
  } else {
    if (strings.error().err == EINTR) return strings.error();
    // The last resort: the exec tracepoint alone, arguments from /proc.
    warn << "execsnoop: " << strings.error().str() << "\n";
    auto bare = session::TraceSession::create(*dir, "execsnoop", sched, false, warn);
    if (!bare) return bare.error();
    impl->bare.emplace(std::move(*bare));
    warn << "execsnoop: arguments from /proc/PID/cmdline only, while the process lives "
            "(marked [proc]; else the file name, marked [?])\n";
  }
  session::CaptureOptions co;
  co.stacks = false;
  if (o.buffered_secs) co.buffer_kb = kBufferedKb;
  if (auto st = impl->trace().read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->trace().ftrace();
  if (auto st = impl->attach(impl->capture->reader().tep()); !st) return st.error();
  return Snooper(std::move(impl));
}

std::string Snooper::header() const {
  std::ostringstream h;
  output::exec_header(h, impl_->o.timestamps);
  return h.str();
}

std::string Snooper::how() const { return impl_->strings ? impl_->strings->how() : ""; }

void Snooper::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.batch.push_back(copy_of(e)); });
  m.handle_batch(false);
}

void Snooper::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

void Snooper::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    m.out = &out;
    m.capture->flush([&](const ftrace::Event& e) { m.batch.push_back(copy_of(e)); });
    m.handle_batch(true);
  }
  session::report_lost(err, dropped(), m.o.buffered_secs.has_value());
  if (m.from_proc || m.unknown)
    err << "execsnoop: " << (m.from_proc + m.unknown) << " exec"
        << (m.from_proc + m.unknown == 1 ? "" : "s") << " without arguments seen"
        << (m.strings && m.strings->path() == session::StringPath::kUprobe
                ? " (made without the C library's exec functions, or with more arguments "
                  "than a probe's record holds)"
                : "")
        << ": " << m.from_proc << " from /proc/PID/cmdline [proc], " << m.unknown
        << " file name only [?].\n";
}

uint64_t Snooper::printed() const { return impl_->printed; }
uint64_t Snooper::dropped() const { return impl_->capture->reader().dropped(); }

}  // namespace tracekit::execsnoop
