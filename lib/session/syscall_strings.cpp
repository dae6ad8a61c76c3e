// How this works: each way (kprobes, eprobes, uprobes) is planned as a list
// of entry-probe targets whose string fetch argument is named after the
// syscall's field, and whose event name starts "c<N>_" (N: the call's
// index), so that the events Probes created can be told apart whatever
// suffix the group gave them. The calls' sys_exit tracepoints are added to
// the same targets, and the whole is one TraceSession. Decoding looks up an
// event's id: an entry's string field (a __data_loc string in probe
// records) and, where the probe fetched it, $comm, are kept for its thread;
// an exit's "ret" completes the thread's call. An argument vector (execve's
// argv) is fetched as one string field per element, <field>0, <field>1,
// ...; the kernel records a fetch that faulted (past the array's NULL end)
// as a string of length 0, which tells it from an empty argument (its NUL).
#include "session/syscall_strings.hpp"

#include <sys/stat.h>
#include <traceevent/event-parse.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <ostream>

#include "syscalls/raw.hpp"
#include "util/strings.hpp"

namespace tracekit::session {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// The call index of an entry event named "c<N>_...", or nullopt.
std::optional<size_t> call_of_event(std::string_view event) {
  if (event.size() < 3 || event[0] != 'c') return std::nullopt;
  auto us = event.find('_');
  if (us == std::string_view::npos) return std::nullopt;
  auto n = parse_int<unsigned>(event.substr(1, us - 1));
  if (!n) return std::nullopt;
  return *n;
}

}  // namespace

std::optional<std::string> read_string(const tep_format_field* f, std::span<const uint8_t> d) {
  if (!f) return std::nullopt;
  size_t off = static_cast<size_t>(f->offset), len = static_cast<size_t>(f->size);
  if (f->flags & TEP_FIELD_IS_DYNAMIC) {
    if (off + 4 > d.size()) return std::nullopt;
    uint32_t loc;
    std::memcpy(&loc, d.data() + off, 4);
    size_t at = loc & 0xffff;
    if (f->flags & TEP_FIELD_IS_RELATIVE) at += off + static_cast<size_t>(f->size);
    off = at;
    len = loc >> 16;
    if (len == 0) return std::nullopt;
  }
  if (off >= d.size()) return std::nullopt;
  len = std::min(len, d.size() - off);
  std::string_view s(reinterpret_cast<const char*>(d.data()) + off, len);
  return std::string(s.substr(0, s.find('\0')));
}

namespace {

std::string field_string(const tep_format_field* f, std::span<const uint8_t> d) {
  return read_string(f, d).value_or("");
}

}  // namespace

void CallPairing::entry(int tid, size_t call, std::string str, std::string comm) {
  SyscallCall c;
  c.tid = tid;
  c.call = call;
  c.str = std::move(str);
  c.comm = std::move(comm);
  entry(std::move(c));
}

void CallPairing::entry(SyscallCall c) {
  const int tid = c.tid;
  // The same call's vector read by two probes (a uprobe on the wrapper,
  // then a kprobe that could not fault a page in): the longer read is kept.
  if (auto before = pending_.exit(tid);
      before && before->call == c.call && before->argv.size() > c.argv.size())
    c.argv = std::move(before->argv);
  pending_.entry(tid, std::move(c));
}

std::optional<SyscallCall> CallPairing::exit(int tid, uint64_t ts, int64_t ret) {
  auto c = take(tid);
  if (!c) return std::nullopt;
  c->ts = ts;
  c->ret = ret;
  return c;
}

std::optional<SyscallCall> CallPairing::take(int tid) { return pending_.exit(tid); }

Result<SyscallStrings> SyscallStrings::create(const std::string& tracing_dir,
                                              const std::string& tool,
                                              std::vector<SyscallString> calls,
                                              kernel::Features& features, std::ostream& warn,
                                              const std::vector<probe::Target>& also) {
  using F = kernel::Feature;
  // The calls this kernel has an exit tracepoint of (no open on arm64); on
  // kernels without syscall tracepoints, and for a call without its own
  // (execve before 4.7 or so: its table entry is stub_execve, which has no
  // syscall metadata, so no syscalls:*_execve; seen on 3.10 and 4.4),
  // those libseccomp has a number of (raw_syscalls:sys_exit with an id
  // filter stands for them).
  const bool tracepoints = features.has(F::kSyscallTracepoints);
  std::vector<SyscallString> have;
  std::vector<int> nrs;
  for (auto& c : calls) {
    if (tracepoints && exists(tracing_dir + "/events/syscalls/sys_exit_" + c.name)) {
      nrs.push_back(-1);
    } else {
      auto raw = syscalls::to_raw("sys_exit_" + c.name);
      if (!raw) continue;
      nrs.push_back(raw->nr);
    }
    have.push_back(std::move(c));
  }
  if (have.empty())
    return Error{ENOENT,
                 "none of the system calls has a sys_exit tracepoint",
                 tracing_dir + "/events/syscalls",
                 {}};
  std::vector<probe::Target> exits = also;  // the exits, after the tool's own
  for (size_t i = 0; i < have.size(); ++i) {
    probe::Target t;
    t.kind = probe::Kind::kTracepoint;
    t.system = "syscalls";
    t.event = "sys_exit_" + have[i].name;
    t.syscall_nr = nrs[i];
    exits.push_back(std::move(t));
  }
  auto readme = read_file(tracing_dir + "/README");
  const bool comm = readme && readme->find("$comm") != std::string::npos;

  std::vector<std::string> lacking;  // ways skipped for a missing feature
  std::optional<Error> refused;
  // One way: its plan with $comm where the README lists it, and, refused
  // so, without (kernels differ in which probes take $comm).
  using Plan = std::function<Result<StringPlan>(bool comm)>;
  auto try_way = [&](StringPath path, const Plan& make) -> std::optional<SyscallStrings> {
    for (bool with_comm : {comm, false}) {
      auto plan = make(with_comm);
      if (!plan) {
        warn << tool << ": cannot use " << path_name(path) << ": " << plan.error().str() << "\n";
        refused = plan.error();
        return std::nullopt;
      }
      std::vector<probe::Target> targets = plan->entries;
      for (const auto& e : exits) targets.push_back(e);
      auto trace =
          TraceSession::create(tracing_dir, tool, targets, /*function_tracer=*/false, warn);
      if (trace) {
        SyscallStrings s;
        s.calls_ = have;
        s.plan_ = std::move(*plan);
        s.trace_.emplace(std::move(*trace));
        return s;
      }
      refused = trace.error();
      if (trace.error().err == EINTR) return std::nullopt;
      if (!with_comm)
        warn << tool << ": " << path_name(path) << " refused (" << trace.error().str()
             << "), trying the next way\n";
    }
    return std::nullopt;
  };
  auto interrupted = [&] { return refused && refused->err == EINTR; };
  const bool ustring = features.has(F::kUstring);
  const UprobeEvents shared = !features.has(F::kProbeAppend) ? UprobeEvents::kEach
                              : features.has(F::kProbeImmediate) ? UprobeEvents::kOne
                                                                 : UprobeEvents::kPerCall;
  std::optional<Result<std::string>> libc;
  Result<std::vector<probe::ElfFunction>> libc_functions = std::vector<probe::ElfFunction>{};
  if (features.has(F::kUprobes)) {
    libc = probe::resolve_library("c");
    libc_functions = *libc ? probe::elf_functions(**libc)
                           : Result<std::vector<probe::ElfFunction>>(libc->error());
  }
  // Kprobes and eprobes read user memory without faulting it in: an
  // argument vector's string that the process has not touched since its
  // fork (a string constant) reads as a fault. Uprobes on the C library's
  // wrappers can fault it in: with an argument vector they are added to
  // the kernel-side probes where they work, and the pairing keeps the
  // longer vector read of the same call (CallPairing::entry).
  const bool vectors =
      std::any_of(have.begin(), have.end(), [](const SyscallString& c) { return c.argv > 0; });
  auto with_uprobes = [&](Result<StringPlan> plan, bool c) -> Result<StringPlan> {
    if (!plan || !vectors || !libc || !*libc || !libc_functions) return plan;
    auto u = plan_uprobes(have, **libc, *libc_functions, c, shared);
    if (!u) return plan;
    for (auto& t : u->entries) plan->entries.push_back(std::move(t));
    plan->how += ", with " + u->how;
    return plan;
  };

  if (features.has(F::kKprobes)) {
    auto functions = probe::kernel_functions(tracing_dir);
    auto s = try_way(StringPath::kKprobe, [&](bool c) -> Result<StringPlan> {
      if (!functions) return functions.error();
      return with_uprobes(plan_kprobes(have, *functions, ustring, c), c);
    });
    if (s) return std::move(*s);
    if (interrupted()) return *refused;
  } else {
    lacking.push_back(features.missing(F::kKprobes).message);
  }
  // Eprobes attach to the syscall tracepoints themselves. Their $comm is
  // not asked for: 6.1's reads garbage there (seen in the VM tier); the
  // comm comes from the recorded command lines instead.
  if (features.has(F::kEprobes) && tracepoints) {
    auto s = try_way(StringPath::kEprobe, [&](bool) -> Result<StringPlan> {
      return with_uprobes(plan_eprobes(have, ustring, false), false);
    });
    if (s) return std::move(*s);
    if (interrupted()) return *refused;
  } else {
    lacking.push_back(features.missing(tracepoints ? F::kEprobes : F::kSyscallTracepoints).message);
  }
  if (features.has(F::kUprobes)) {
    auto s = try_way(StringPath::kUprobe, [&](bool c) -> Result<StringPlan> {
      if (!libc_functions) return libc_functions.error();
      return plan_uprobes(have, **libc, *libc_functions, c, shared);
    });
    if (s) return std::move(*s);
    if (interrupted()) return *refused;
  } else {
    lacking.push_back(features.missing(F::kUprobes).message);
  }
  if (refused) return *refused;
  Error e = features.missing(F::kUprobes);
  e.message = "cannot read system call strings: " + join(lacking);
  e.hint =
      "one of them is needed: CONFIG_KPROBE_EVENTS, CONFIG_EPROBE_EVENTS (Linux 5.15) "
      "or CONFIG_UPROBE_EVENTS";
  return e;
}

Status SyscallStrings::attach(tep_handle* tep) {
  by_id_.clear();
  for (const auto& ev : trace_->probes().events()) {
    tep_event* te = tep_find_event(tep, ev.id);
    if (!te) return Error{0, "no format loaded for " + ev.system + ":" + ev.event, {}, {}};
    Decoded d;
    if (ev.system != "syscalls" && ev.system != "raw_syscalls") {
      auto call = call_of_event(ev.event);
      if (!call || *call >= calls_.size()) continue;
      d.entry = true;
      d.call = *call;
      const SyscallString& c = calls_[*call];
      if (c.argv > 0) {
        for (int i = 0; i < c.argv; ++i) {
          d.argv.push_back(tep_find_field(te, (c.field + std::to_string(i)).c_str()));
          if (!d.argv.back())
            return Error{0,
                         "event " + ev.system + ":" + ev.event + " has no field " + c.field +
                             std::to_string(i),
                         {},
                         {}};
        }
        d.value = d.argv.front();
      } else {
        d.value = tep_find_field(te, c.field.c_str());
      }
      d.comm = tep_find_field(te, "comm");
      d.call_field = tep_find_field(te, "tk_call");
    } else if (ev.system == "raw_syscalls") {
      // The stand-in for every call's sys_exit: its id filter admits only
      // theirs, and the exit pairs with the thread's pending entry.
      if (ev.event != syscalls::raw_event(true)) continue;
      d.value = tep_find_field(te, "ret");
    } else {
      auto it = std::find_if(calls_.begin(), calls_.end(), [&](const SyscallString& c) {
        return ev.event == "sys_exit_" + c.name;
      });
      if (it == calls_.end()) continue;
      d.call = static_cast<size_t>(it - calls_.begin());
      d.value = tep_find_field(te, "ret");
    }
    if (!d.value)
      return Error{0,
                   "event " + ev.system + ":" + ev.event + " has no field " +
                       (d.entry ? calls_[d.call].field : std::string("ret")),
                   {},
                   {}};
    by_id_[ev.id] = d;
  }
  return {};
}

std::optional<SyscallCall> SyscallStrings::push(const ftrace::Event& e) {
  auto it = by_id_.find(e.type);
  if (it == by_id_.end()) return std::nullopt;
  const Decoded& d = it->second;
  if (d.entry) {
    SyscallCall c;
    c.ts = e.ts;
    c.tid = e.pid;
    c.call = d.call;
    unsigned long long call = 0;
    if (d.call_field &&
        tep_read_number_field(const_cast<tep_format_field*>(d.call_field), e.data.data(),
                              &call) == 0 &&
        call < calls_.size())
      c.call = static_cast<size_t>(call);
    c.comm = field_string(d.comm, e.data);
    if (d.argv.empty()) c.str = field_string(d.value, e.data);
    for (const auto* f : d.argv) {
      auto s = read_string(f, e.data);
      if (!s) break;
      c.argv.push_back(std::move(*s));
    }
    pairing_.entry(std::move(c));
    return std::nullopt;
  }
  unsigned long long v = 0;
  if (tep_read_number_field(const_cast<tep_format_field*>(d.value), e.data.data(), &v) != 0)
    return std::nullopt;
  auto c = pairing_.exit(e.pid, e.ts, static_cast<int64_t>(v));
  if (!c) ++unpaired_;
  return c;
}

}  // namespace tracekit::session
