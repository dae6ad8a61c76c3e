// How the records are decoded: each event id of the session is looked up
// once (attach) and says what it is: a call's sys_enter_* (its fields by
// name: pid, tgid, sig), a sys_exit_* (ret), or, on kernels without
// syscall tracepoints, raw_syscalls:sys_enter (id, args[6]) or sys_exit
// (id, ret), the call then named by the record's id. A poll's records are
// decoded into Records in time order (the capture merges the CPUs: a
// thread moved to another CPU in the middle of a call has its entry and
// exit in two rings), paired per thread, filtered and printed.
#include "killsnoop/killsnoop.hpp"

#include <sys/stat.h>
#include <traceevent/event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <csignal>
#include <cstring>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "feature_table/feature_table.hpp"
#include "kernel/features.hpp"
#include "killsnoop/render.hpp"
#include "probe/match.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/filter.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"

namespace tracekit::killsnoop {

namespace {

// The low 32 bits of a register, as the int argument the kernel reads.
int as_int(uint64_t v) { return static_cast<int32_t>(static_cast<uint32_t>(v)); }

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

std::string_view call_name(Call c) {
  switch (c) {
    case Call::kKill:
      return "kill";
    case Call::kTkill:
      return "tkill";
    case Call::kTgkill:
      return "tgkill";
  }
  return "";
}

Record entry_from_args(Call c, const uint64_t args[3]) {
  Record r;
  r.call = c;
  if (c == Call::kTgkill) {
    r.tgid = as_int(args[0]);
    r.target = as_int(args[1]);
    r.sig = as_int(args[2]);
  } else {
    r.target = as_int(args[0]);
    r.sig = as_int(args[1]);
  }
  return r;
}

bool sent_to(const Kill& k, int pid) {
  return k.target == pid || (k.call == Call::kTgkill && k.tgid == pid);
}

std::string target_filter(Call c, int pid) {
  std::string p = std::to_string(pid);
  if (c == Call::kTgkill) return "tgid == " + p + " || pid == " + p;
  return "pid == " + p;
}

std::optional<std::string> comm_filter(std::string_view regex) {
  bool begin = !regex.empty() && regex.front() == '^';
  if (begin) regex.remove_prefix(1);
  bool end = !regex.empty() && regex.back() == '$';
  if (end) regex.remove_suffix(1);
  if (regex.empty() || regex.size() > 15) return std::nullopt;  // TASK_COMM_LEN - 1
  for (char c : regex)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-' && c != '/' &&
        c != ':' && c != '@' && c != '=' && c != ',' && c != '%')
      return std::nullopt;
  std::string name(regex);
  if (begin && end) return "comm == \"" + name + "\"";
  return "comm ~ \"" + std::string(begin ? "" : "*") + name + (end ? "" : "*") + "\"";
}

std::string signal_name(int sig) {
  // x86-64's (and most architectures') numbering; 32 and 33 are the C
  // library's own real-time signals and have no name.
  static constexpr const char* kNames[] = {
      nullptr,     "SIGHUP",  "SIGINT",    "SIGQUIT", "SIGILL",   "SIGTRAP", "SIGABRT", "SIGBUS",
      "SIGFPE",    "SIGKILL", "SIGUSR1",   "SIGSEGV", "SIGUSR2",  "SIGPIPE", "SIGALRM", "SIGTERM",
      "SIGSTKFLT", "SIGCHLD", "SIGCONT",   "SIGSTOP", "SIGTSTP",  "SIGTTIN", "SIGTTOU", "SIGURG",
      "SIGXCPU",   "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO",   "SIGPWR",  "SIGSYS"};
  constexpr int kRtMin = 34, kRtMax = 64;
  if (sig > 0 && sig < static_cast<int>(std::size(kNames))) return kNames[sig];
  if (sig == kRtMin) return "SIGRTMIN";
  if (sig > kRtMin && sig <= kRtMax) return "SIGRTMIN+" + std::to_string(sig - kRtMin);
  return std::to_string(sig);
}

std::optional<Kill> Pairing::push(const Record& r) {
  if (!r.exit) {
    pending_.entry(r.tid, r);
    return std::nullopt;
  }
  auto e = pending_.exit(r.tid);
  if (!e) return std::nullopt;
  return Kill{r.ts, r.tid, e->call, e->target, e->tgid, e->sig, r.ret};
}

namespace {

// What one event id of the session is.
struct Decoder {
  enum Kind { kEnter, kExit, kRawEnter, kRawExit } kind = kEnter;
  Call call = Call::kKill;                  // kEnter, kExit
  const tep_format_field* args[3] = {};     // kEnter: the call's arguments in order
  const tep_format_field* value = nullptr;  // ret (exits), args (kRawEnter)
  const tep_format_field* id = nullptr;     // raw events: the syscall number
};

uint64_t number(const tep_format_field* f, std::span<const uint8_t> d) {
  unsigned long long v = 0;
  if (f && tep_read_number_field(const_cast<tep_format_field*>(f), d.data(), &v) != 0) return 0;
  return v;
}

}  // namespace

struct Snooper::Impl {
  Options o;
  std::ostream* out = nullptr;
  std::optional<session::TraceSession> trace;
  session::FtraceCapture* capture = nullptr;
  std::optional<probe::Matcher> name;
  std::optional<session::SavedComms> comms;
  std::unordered_map<int, Decoder> by_id;
  std::unordered_map<int, Call> by_nr;  // raw events: the calls by syscall number
  std::vector<Record> records;          // of this poll
  Pairing pairing;
  uint64_t printed = 0;

  Status attach(tep_handle* tep) {
    for (const auto& ev : trace->probes().events()) {
      tep_event* te = tep_find_event(tep, ev.id);
      if (!te) return Error{0, "no format loaded for " + ev.system + ":" + ev.event, {}, {}};
      Decoder d;
      auto field = [&](const char* name) -> Result<const tep_format_field*> {
        if (auto* f = tep_find_field(te, name)) return f;
        return Error{0, "event " + ev.system + ":" + ev.event + " has no field " + name, {}, {}};
      };
      const bool raw = ev.system == syscalls::kRawSystem;
      const bool exit =
          raw ? ev.event == syscalls::raw_event(true) : ev.event.rfind("sys_exit_", 0) == 0;
      if (raw) {
        d.kind = exit ? Decoder::kRawExit : Decoder::kRawEnter;
        auto id = field("id");
        auto value = field(exit ? "ret" : "args");
        if (!id) return id.error();
        if (!value) return value.error();
        d.id = *id;
        d.value = *value;
      } else {
        std::string_view call = std::string_view(ev.event).substr(exit ? 9 : 10);
        auto c = std::find_if(std::begin(kCalls), std::end(kCalls),
                              [&](Call x) { return call_name(x) == call; });
        if (c == std::end(kCalls)) continue;
        d.call = *c;
        if (exit) {
          d.kind = Decoder::kExit;
          auto ret = field("ret");
          if (!ret) return ret.error();
          d.value = *ret;
        } else {
          d.kind = Decoder::kEnter;
          std::vector<const char*> names = {"pid", "sig"};
          if (*c == Call::kTgkill) names = {"tgid", "pid", "sig"};
          for (size_t i = 0; i < names.size(); ++i) {
            auto f = field(names[i]);
            if (!f) return f.error();
            d.args[i] = *f;
          }
        }
      }
      by_id[ev.id] = d;
    }
    return {};
  }

  // Decodes a record of the session into records (valid during the call
  // only: copied out).
  void decode(const ftrace::Event& e) {
    auto it = by_id.find(e.type);
    if (it == by_id.end()) return;
    const Decoder& d = it->second;
    Record r;
    Call call = d.call;
    if (d.kind == Decoder::kRawEnter || d.kind == Decoder::kRawExit) {
      auto c = by_nr.find(static_cast<int>(number(d.id, e.data)));
      if (c == by_nr.end()) return;
      call = c->second;
    }
    switch (d.kind) {
      case Decoder::kEnter: {
        uint64_t a[3] = {};
        for (int i = 0; i < 3; ++i) a[i] = number(d.args[i], e.data);
        r = entry_from_args(call, a);
        break;
      }
      case Decoder::kRawEnter: {
        uint64_t a[3] = {};
        size_t off = static_cast<size_t>(d.value->offset);
        if (off + sizeof a > e.data.size()) return;
        std::memcpy(a, e.data.data() + off, sizeof a);
        r = entry_from_args(call, a);
        break;
      }
      case Decoder::kExit:
      case Decoder::kRawExit:
        r.exit = true;
        r.call = call;
        r.ret = static_cast<int64_t>(number(d.value, e.data));
        break;
    }
    r.ts = e.ts;
    r.tid = e.pid;
    records.push_back(r);
  }

  // Pairs this poll's records (in time order: the reader merges the CPUs)
  // and prints the calls.
  void print(std::ostream& to) {
    for (const Record& r : records) {
      auto k = pairing.push(r);
      if (!k || !to) continue;
      if (o.pid && !sent_to(*k, *o.pid)) continue;
      std::string comm = (*comms)(k->tid);
      if (name && !(*name)(comm)) continue;
      std::string sig = o.signal_names ? signal_name(k->sig) : std::to_string(k->sig);
      output::kill_event(to, {k->ts, comm, k->tid, k->target, sig, k->ret}, o.timestamps);
      ++printed;
    }
    records.clear();
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
  if (o.pid && !process_exists(*o.pid))
    return no_process_error(*o.pid);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  impl->comms.emplace(*dir);

  // Each call's entry and exit: their tracepoints, or raw_syscalls standing
  // for them (the syscall's number from libseccomp).
  const bool tracepoints = kernel::Features::host().has(kernel::Feature::kSyscallTracepoints);
  std::vector<probe::Target> targets;
  for (Call c : kCalls) {
    std::string name(call_name(c));
    int nr = -1;
    if (tracepoints) {
      if (!exists(*dir + "/events/syscalls/sys_enter_" + name)) continue;
    } else {
      auto raw = syscalls::to_raw("sys_enter_" + name);
      if (!raw) continue;
      nr = raw->nr;
      impl->by_nr[nr] = c;
    }
    for (const char* side : {"sys_enter_", "sys_exit_"}) {
      probe::Target t;
      t.kind = probe::Kind::kTracepoint;
      t.system = "syscalls";
      t.event = side + name;
      t.syscall_nr = nr;
      targets.push_back(std::move(t));
    }
  }
  if (targets.empty())
    return Error{ENOENT, "none of kill, tkill, tgkill has a syscall tracepoint",
                 *dir + "/events/syscalls", "CONFIG_FTRACE_SYSCALLS"};
  auto trace = session::TraceSession::create(*dir, "killsnoop", targets,
                                             /*function_tracer=*/false, warn);
  if (!trace) return trace.error();
  impl->trace.emplace(std::move(*trace));

  session::CaptureOptions co;
  co.stacks = false;
  // A call's entry and exit may be read from two CPUs (the thread moved).
  co.time_ordered = true;
  // Not our own calls (reading saved_cmdlines makes none, but a tool
  // tracing itself is a loop waiting to happen).
  co.filter = "common_pid != " + std::to_string(getpid());
  // Live too: a kill storm (a supervisor stopping a process tree) is
  // short and dense, and the default buffer lost a quarter of 200,000
  // calls sent as fast as possible.
  co.buffer_kb = kBufferedKb;
  if (auto st = impl->trace->read_with_ftrace(co, warn); !st) return st.error();
  impl->capture = impl->trace->ftrace();
  // -p and -n in the kernel, on the entries (an exit without its entry
  // completes nothing): -p on the syscall tracepoints only (raw_syscalls'
  // args cannot be filtered), -n where it is a plain name and the kernel
  // takes comm in filters. Set once enabled: what came before is filtered
  // here, as everything is.
  const auto name_filter = o.name.empty() ? std::nullopt : comm_filter(o.name);
  for (const auto& ev : impl->trace->probes().events()) {
    const bool raw = ev.system == syscalls::kRawSystem;
    if (raw ? ev.event != syscalls::raw_event(false) : ev.event.rfind("sys_enter_", 0) != 0)
      continue;
    std::string extra;
    if (o.pid && !raw) {
      auto c = std::find_if(std::begin(kCalls), std::end(kCalls), [&](Call x) {
        return ev.event == "sys_enter_" + std::string(call_name(x));
      });
      if (c == std::end(kCalls)) continue;
      extra = target_filter(*c, *o.pid);
    } else if (name_filter) {
      extra = *name_filter;
    }
    if (extra.empty()) continue;
    auto f = tracefs::join_filters(tracefs::join_filters(ev.filter, co.filter), extra);
    auto st = impl->capture->instance().set_filter(ev.system, ev.event, f);
    if (!st && o.pid) return st.error();
  }
  if (auto st = impl->attach(impl->capture->reader().tep()); !st) return st.error();
  return Snooper(std::move(impl));
}

std::string Snooper::header() const {
  std::ostringstream h;
  output::kill_header(h, impl_->o.timestamps);
  return h.str();
}

void Snooper::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.capture->poll(timeout_ms, [&](const ftrace::Event& e) { m.decode(e); });
  m.print(*m.out);
}

void Snooper::stop() { (void)impl_->capture->instance().set_tracing_on(false); }

void Snooper::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    m.capture->flush([&](const ftrace::Event& e) { m.decode(e); });
    m.print(out);
  }
  session::report_lost(err, dropped(), m.o.buffered_secs.has_value());
}

uint64_t Snooper::printed() const { return impl_->printed; }
uint64_t Snooper::dropped() const { return impl_->capture->reader().dropped(); }

}  // namespace tracekit::killsnoop
