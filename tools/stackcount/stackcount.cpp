#include "stackcount/stackcount.hpp"

#include <malloc.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <ostream>
#include <utility>

#include "cli/signals.hpp"
#include "ftrace/reader.hpp"
#include "kernel/features.hpp"
#include "perf/event.hpp"
#include "perf/sample.hpp"
#include "perf/stack_sampler.hpp"
#include "probe/spec.hpp"
#include "output/print_report.hpp"
#include "report/stack_records.hpp"
#include "session/entry_frame.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "syscalls/raw.hpp"
#include "symbols/kallsyms.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"

namespace tracekit::stackcount {

// Table bounds: a few tens of MB at most. Events beyond them are reported,
// never silently lost.
constexpr size_t kStacks = 262144;
constexpr size_t kKeys = 262144;

// The perf backend on this many syscall tracepoints or more traces them
// through raw_syscalls instead: each perf tracepoint event's close waits
// for a kernel synchronisation (perf_trace_event_unreg, 30-95 ms here), so
// that four of them already pass a 200 ms teardown, and 360 took 12 s.
constexpr size_t kRawSyscallsFrom = 4;

struct Counter::Impl {
  Options o;
  bool user_stacks = false;
  bool kernel_stacks = false;
  // Syscall tracepoints traced through raw_syscalls (perf backend): their
  // samples' kernel frames are not the tracepoints' (which have none).
  bool raw_syscalls = false;
  // Syscall tracepoints some of which go through raw_syscalls (perf
  // backend): raw_syscalls fires for a 32-bit task's calls too, numbered
  // as i386 numbers them, which the syscalls:* tracepoints never report;
  // their samples are dropped by their register ABI.
  bool drop_compat = false;
  // What the run created in the kernel, and the reader it reads through
  // (owned by trace; one of the two).
  std::optional<session::TraceSession> trace;
  session::FtraceCapture* ftrace = nullptr;
  session::PerfCapture* perf = nullptr;
  // perf backend: the events' stacks, records, symbols and warnings.
  std::optional<perf::StackSampler> sampler;
  perf::TaskNames ftrace_names;                    // ftrace backend, -P
  std::optional<session::SavedComms> saved_comms;  // ftrace backend, -P: names at report time
  std::unordered_map<uint32_t, uint32_t> tgid_cache;
  aggregate::StackCounts counts{kStacks, kKeys};
  uint64_t lost_reported = 0;  // ftrace backend
  // Probes at user functions' first instructions (session::CaptureOptions::
  // entry_callers): each sample's stack top is the caller, inserted where
  // the kernel has not (perf::with_entry_caller). Which of the functions
  // start with push %rbp/endbr64 (probe::Target::frame_entry): none, all,
  // or some, then looked up by the sampled address, once per process.
  bool entry_callers = false;
  enum class FrameEntry : uint8_t { kNone, kAll, kSome } frame_entry = FrameEntry::kNone;
  std::map<std::pair<uint32_t, uint64_t>, bool> frame_entry_at;  // kSome: (pid, ip)
  std::vector<uint64_t> entry_frames;
  int64_t started_ns = report::unix_now_ns();  // this report's start, for the -o files
  // ftrace backend: the kernel symbols, and the events of kprobes at
  // functions' entries, whose
  // stacks get the probed function where the unwinder left it out
  // (entry_frame.hpp), and the frames built for that.
  std::unordered_set<int> entry_kprobes;
  int function_event = -1;  // ftrace:function's id, with the function tracer
  std::vector<uint64_t> entry_frame;
  symbols::KernelSymbols ksyms;

  perf::TaskNames& names() { return sampler ? sampler->names() : ftrace_names; }

  uint32_t tgid(uint32_t tid) {
    auto it = tgid_cache.find(tid);
    if (it != tgid_cache.end()) return it->second;
    uint32_t t = tid;
    if (auto g = tgid_of(static_cast<int>(tid))) t = static_cast<uint32_t>(*g);
    tgid_cache.emplace(tid, t);
    return t;
  }

  // Keys carry the process when -P shows it, and whenever user stacks are
  // kept: they resolve in their process. Records that print the same are
  // merged in the report.
  void count(uint32_t pid, uint32_t tid, uint32_t cpu,
             std::optional<std::span<const uint64_t>> kernel,
             std::optional<std::span<const uint64_t>> user) {
    if (o.pid && pid != static_cast<uint32_t>(*o.pid)) return;  // beyond the kernel filter
    std::string_view comm = o.per_pid ? names().comm(pid, tid, cpu) : std::string_view();
    counts.add(o.per_pid || user_stacks ? pid : 0, comm, kernel, user, 1);
  }

  void on_ftrace(const ftrace::Event& e) {
    uint32_t tid = static_cast<uint32_t>(e.pid);
    // With -p the capture hands out the process's threads only.
    uint32_t pid = o.pid ? static_cast<uint32_t>(*o.pid) : o.per_pid ? tgid(tid) : 0;
    std::optional<std::span<const uint64_t>> kernel;
    if (kernel_stacks) {
      if (entry_kprobes.contains(e.type)) {
        kernel = with_probed_function(e.stack, kprobe_ip(e.data), ksyms, entry_frame);
      } else if (e.type == function_event) {
        auto f = function_entry(e.data);
        kernel = with_probed_function(e.stack, f.ip, ksyms, entry_frame, f.parent_ip);
      } else {
        kernel = with_probed_function(e.stack, 0, ksyms, entry_frame);  // the end marker off
      }
    }
    count(pid, tid, static_cast<uint32_t>(e.cpu), kernel, std::nullopt);
  }

  // Whether the probed function user[0] is the entry of, in pid, starts
  // with push %rbp or endbr64.
  bool frame_entry_of(uint32_t pid, std::span<const uint64_t> user) {
    if (frame_entry != FrameEntry::kSome || user.empty()) return frame_entry == FrameEntry::kAll;
    auto [it, added] = frame_entry_at.try_emplace({pid, user[0]}, false);
    if (added)
      if (auto m = sampler->user_symbols().mapping(static_cast<pid_t>(pid), user[0]))
        it->second = probe::entry_sets_frame(std::string(m->path), m->offset + user[0] - m->start);
    return it->second;
  }

  void on_sample(const perf::Sample& s) {
    if (perf->duplicate(s)) return;
    if (drop_compat && s.regs_abi == PERF_SAMPLE_REGS_ABI_32) return;
    perf::Chains chains = sampler->chains(s);
    // A syscall tracepoint's perf sample is taken on the syscall's user
    // registers: no kernel frames, and none from its raw_syscalls stand-in
    // (not asked for; a kernel before 3.7 gives them anyway).
    if (raw_syscalls) chains.kernel = chains.kernel.first(0);
    if (entry_callers)
      if (auto top = perf::stack_top(s))
        chains.user = perf::with_entry_caller(chains.user, *top,
                                              frame_entry_of(s.pid, chains.user), entry_frames);
    auto st = sampler->stacks(s, chains);
    count(s.pid, s.tid, s.cpu, st.kernel, st.user);
  }

  // Which stacks, from where (o.backend, auto: perf for user stacks where
  // the probes allow it); notes about the choice go to warn.
  Result<session::Backend> choose_backend(std::ostream& warn) {
    bool want_user = !o.kernel_only;
    bool want_kernel = !o.user_only;
    session::Backend backend = o.backend;
    bool needs_ftrace = !trace->probes().functions().empty();
    if (needs_ftrace && backend == session::Backend::kPerf)
      return Error{0, "--backend perf cannot trace kernel functions on this kernel", {},
                   "it has no kprobes; the function tracer needs --backend ftrace"};
    if (backend == session::Backend::kAuto)
      backend = (want_user && !needs_ftrace) ? session::Backend::kPerf : session::Backend::kFtrace;
    if (backend == session::Backend::kFtrace && o.call_graph.dwarf())
      return Error{0, "--call-graph dwarf needs the perf backend", {},
                   needs_ftrace ? "these functions can only be traced by the function tracer"
                                : "drop --backend ftrace"};
    if (backend == session::Backend::kFtrace && want_user) {
      if (o.user_only)
        return Error{0, "user stacks (-U) need the perf backend", {},
                     needs_ftrace ? "kernel functions on this kernel can only be traced by the "
                                    "function tracer: use -K"
                                  : "drop --backend ftrace"};
      warn << "stackcount: "
           << (needs_ftrace ? "no kprobes in this kernel: tracing with the function tracer, "
                            : "the ftrace backend reads ")
           << "kernel stacks only\n";
      want_user = false;
    }
    kernel_stacks = want_kernel;
    user_stacks = want_user;
    return backend;
  }

  // What the perf backend's samples carry besides the stacks, for targets.
  void perf_samples(const std::vector<probe::Target>& targets, std::ostream& warn) {
    // Frame-pointer user stacks of probes at functions' entries miss the
    // callers: the stack top names them (x86_64: the return address is
    // there at a function's first instruction).
    const bool at_entry =
        std::all_of(targets.begin(), targets.end(), [](const probe::Target& t) { return t.at_entry; });
#if defined(__x86_64__)
    if (user_stacks && !o.call_graph.dwarf() && at_entry) {
      auto& features = kernel::Features::host();
      entry_callers = features.has(kernel::Feature::kUserStack);
      if (!entry_callers)
        warn << "stackcount: the callers of the probed functions are missing from the user stacks: "
             << features.missing(kernel::Feature::kUserStack).message << "\n";
      size_t framed = std::count_if(targets.begin(), targets.end(),
                                    [](const probe::Target& t) { return t.frame_entry; });
      frame_entry = framed == 0                ? FrameEntry::kNone
                    : framed == targets.size() ? FrameEntry::kAll
                                               : FrameEntry::kSome;
    }
#endif
    if (std::all_of(targets.begin(), targets.end(),
                    [](const probe::Target& t) {
                      return t.kind == probe::Kind::kTracepoint && t.system == syscalls::kSystem;
                    }) &&
        std::any_of(targets.begin(), targets.end(),
                    [](const probe::Target& t) { return t.syscall_nr >= 0; })) {
      auto& features = kernel::Features::host();
      drop_compat = features.has(kernel::Feature::kUserStack);
      if (!drop_compat)
        warn << "stackcount: 32-bit processes' system calls are counted too, as the calls of the "
                "same numbers: "
             << features.missing(kernel::Feature::kUserStack).message << "\n";
    }
  }

  Status read_with_ftrace(session::CaptureOptions co, const std::string& tracing_dir,
                          const std::vector<probe::Target>& targets, std::ostream& warn) {
    const bool want_kernel = kernel_stacks;
    co.stacks = want_kernel;
    // Kprobes' stacks from the stacktrace option, which unwinds from the
    // probe's registers: a stacktrace trigger unwinds from the trigger's
    // own code, through the kprobe's ftrace trampoline, and gave no frame at
    // all on 4.4 and "ftrace_ops_assist_func [unknown] [unknown]" on 4.14
    // (4.19 and later get through; seen in the VM tier). The option's stack
    // starts at the probed function there, and before its caller's caller
    // with frame pointers (entry_frame.hpp). Not kretprobes: with the option
    // 6.1 recorded no kretprobe event at all (stackcount -K r::vfs_read
    // counted 0 of 30), and their triggers' stacks work there.
    co.stack_option = std::any_of(targets.begin(), targets.end(), [](const probe::Target& t) {
      return t.kind == probe::Kind::kKernel;
    });
    co.event_formats = false;  // on_ftrace reads the pid and the stack only
    // The instance's ring as big as the perf backend's (perf::ring_pages):
    // 8 MiB per CPU on up to 4 CPUs, where the kernel's default is 1.4 MiB.
    // Two unpaced loops on 2 CPUs overran the default by 6,232 events of 2 M.
    const auto online = perf::online_cpus();
    co.buffer_kb = perf::ring_pages(online ? online->size() : 1) *
                   (static_cast<size_t>(getpagesize()) / 1024);
    if (auto st = trace->read_with_ftrace(co, warn); !st) return st.error();
    ftrace = trace->ftrace();
    if (o.per_pid) {
      saved_comms.emplace(tracing_dir);
      ftrace_names.note_existing(
          o.pid ? std::optional<uint32_t>(static_cast<uint32_t>(*o.pid)) : std::nullopt);
    }
    if (want_kernel) {
      entry_kprobes = entry_kprobe_ids(trace->probes(), targets);
      if (!trace->probes().functions().empty())
        function_event = function_event_id(tracing_dir);
      if (!entry_kprobes.empty() || function_event >= 0)
        if (auto k = symbols::KernelSymbols::load()) ksyms = std::move(*k);
    }
    return {};
  }

  Status read_with_perf(session::CaptureOptions co) {
    const bool want_kernel = kernel_stacks, want_user = user_stacks;
    co.regs_abi = drop_compat;
    if (auto st = trace->read_with_perf(co, want_kernel && !raw_syscalls, want_user); !st)
      return st.error();
    perf = trace->perf();
    perf::SamplerOptions so;
    so.kernel = want_kernel;
    so.user = want_user;
    so.call_graph = o.call_graph;
    so.strip_tracing = !raw_syscalls;
    // Its events are probes: uprobes (taken with the full registers) and
    // tracepoints, the syscall ones on the slow path already; and finding
    // out whether the kernel has a fast path would read /proc/kallsyms
    // (40-90 ms of a start-up that takes less).
    so.syscall_regs = false;
    sampler.emplace(perf->events(), perf->attr(), std::move(so));
    // The traced process's mappings are read while it lives, and with -P
    // its name (every task's without -p): tasks that existed before the
    // events were enabled get no MMAP2 or COMM record.
    return sampler->enable(o.pid ? std::vector<int>{*o.pid} : std::vector<int>{}, o.per_pid);
  }

  void drain(bool last) {
    auto sampled = [this](int, const perf::Sample& s) { on_sample(s); };
    auto other = [](int, const perf_event_header&, std::span<const uint8_t>) {};
    if (last)
      sampler->finish(sampled, other);
    else
      sampler->drain(sampled, other, SIZE_MAX, [] { return cli::stop_requested(); });
  }
};

Counter::Counter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Counter::Counter(Counter&&) noexcept = default;
Counter::~Counter() = default;

Result<Counter> Counter::start(const Options& o, std::ostream& warn) {
  if (o.pid && !process_exists(*o.pid))
    return no_process_error(*o.pid);
  // Before anything is created: a CPU this machine does not have would
  // otherwise surface as perf's EINVAL or tracing_cpumask's EOVERFLOW.
  if (o.cpu)
    if (auto ok = perf::check_cpu_online(*o.cpu); !ok) return ok.error();
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto spec = probe::parse_spec(o.pattern);
  if (!spec) return spec.error();
  probe::ExpandOptions eo;
  eo.regex = o.regex;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) return targets.error();
  if (targets->empty()) return probe::no_match_error(*spec);

  auto impl = std::make_unique<Impl>();
  impl->o = o;
  // Many syscall tracepoints on the perf backend: one raw_syscalls event per
  // CPU (and side) with an id filter stands for them (see kRawSyscallsFrom).
  // The ftrace backend pays no synchronisation per event: -K keeps them.
  const bool perf_backend = o.backend == session::Backend::kPerf ||
                            (o.backend == session::Backend::kAuto && !o.kernel_only);
  if (perf_backend && targets->size() >= kRawSyscallsFrom) {
    std::vector<probe::Target> raw = *targets;
    if (size_t n = probe::syscalls_through_raw(raw); n >= kRawSyscallsFrom) {
      impl->raw_syscalls = true;
      warn << "stackcount: " << n << " of " << raw.size()
           << " syscall tracepoints traced through raw_syscalls with an id filter (one perf "
              "event per CPU and side: closing a perf event per tracepoint waits for the "
              "kernel each)";
      if (n < raw.size()) warn << "; the others have no number known here";
      warn << "\n";
      *targets = std::move(raw);
    }
  }
  auto trace = session::TraceSession::create(*dir, "stackcount", *targets,
                                             /*function_tracer=*/true, warn);
  if (!trace) return trace.error();
  impl->trace.emplace(std::move(*trace));

  auto backend = impl->choose_backend(warn);
  if (!backend) return backend.error();
  if (*backend == session::Backend::kPerf) impl->perf_samples(*targets, warn);

  session::CaptureOptions co;
  co.cpu = o.cpu;
  co.pid = o.pid;
  co.call_graph = o.call_graph;
  co.entry_callers = impl->entry_callers;
  Status st = *backend == session::Backend::kFtrace
                  ? impl->read_with_ftrace(std::move(co), *dir, *targets, warn)
                  : impl->read_with_perf(std::move(co));
  if (!st) return st.error();
  return Counter(std::move(impl));
}

size_t Counter::traced() const { return impl_->trace->probes().size(); }

void Counter::poll(int timeout_ms) {
  Impl& m = *impl_;
  if (m.ftrace) {
    m.ftrace->poll(timeout_ms, [&](const ftrace::Event& e) { m.on_ftrace(e); });
  } else {
    // Each drain reads at most what the rings hold when it starts; a stop
    // request ends it early (stop() reads the rest once the events are off).
    m.sampler->events().wait(timeout_ms);
    m.drain(/*last=*/false);
  }
}

void Counter::stop() {
  Impl& m = *impl_;
  if (m.ftrace) {
    (void)m.ftrace->instance().set_tracing_on(false);
    m.ftrace->flush([&](const ftrace::Event& e) { m.on_ftrace(e); });
  } else {
    (void)m.sampler->events().disable();
    m.drain(/*last=*/true);
  }
}

report::PrintOptions report_options(const Options& o, bool kernel_stacks, bool user_stacks) {
  report::PrintOptions p;
  p.style.frame_indent = 2;
  // -P asks for the process of each stack: "    comm [pid]", with -p too
  // (bcc leaves it out with -p; the user asked for it, and -p PID does not
  // say which name the process had).
  p.style.process_line = o.per_pid;
  p.pid_in_record = o.per_pid;
  p.style.bracketed_process = true;
  p.style.folded_comm = o.per_pid;
  p.style.delimiter = o.delimited && kernel_stacks && user_stacks;
  p.style.addresses = o.verbose && !o.folded;
  p.style.offsets = o.offset;
  p.folded = o.folded;
  p.kernel_symbols = kernel_stacks;
  p.unit = "events";
  p.output = &o.output;
  p.tool = "stackcount";
  p.value_unit = report::Unit::kEvents;
  return p;
}

void Counter::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  report::PrintOptions p = report_options(m.o, m.kernel_stacks, m.user_stacks);
  // Events, not ring records (an event and its stack are two).
  const uint64_t lost =
      m.sampler ? m.sampler->lost() : m.ftrace->lost_events() - m.lost_reported;
  p.start_unix_ns = m.started_ns;
  p.totals.lost_events = lost;
  p.totals.truncated_stacks = m.sampler ? m.sampler->truncated() : 0;
  if (m.sampler) m.sampler->warn_before(err);
  report::Report r = report::build_report(
      m.counts, m.sampler ? &m.sampler->user_symbols() : nullptr, p, err);
  // Names of threads whose samples came before the records naming them.
  if (m.o.per_pid) {
    perf::TaskNames::Fallback saved;
    if (m.saved_comms)
      saved = [&m](uint32_t tid) { return m.saved_comms->known(static_cast<int>(tid)); };
    for (auto& rec : r.records) rec.comm = m.names().settle(rec.comm, saved);
  }
  // The report holds what it prints: the tables start over before it is
  // printed, and their pages go back to the kernel (malloc keeps freed
  // heap pages resident otherwise), so that printing and the -o files'
  // structures peak below what counting and the report took together.
  m.counts = aggregate::StackCounts(kStacks, kKeys);
  malloc_trim(0);
  output::print_report(out, err, r, p);
  m.started_ns = report::unix_now_ns();  // the next interval's

  if (m.sampler) {
    m.sampler->warn(err);
  } else if (lost > 0) {
    err << perf::lost_events_warning(lost);
    m.lost_reported += lost;
  }
}

}  // namespace tracekit::stackcount
