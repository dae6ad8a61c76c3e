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
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "perf/user_unwind.hpp"
#include "probe/spec.hpp"
#include "report/stack_records.hpp"
#include "session/entry_frame.hpp"
#include "session/saved_comms.hpp"
#include "session/trace_session.hpp"
#include "syscalls/raw.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/tracing_frames.hpp"
#include "symbols/user.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/backlog.hpp"
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
  std::unique_ptr<symbols::UserSymbols> user_syms = std::make_unique<symbols::UserSymbols>();
  perf::TaskNames names;
  std::optional<session::SavedComms> saved_comms;  // ftrace backend, -P: names at report time
  std::unique_ptr<perf::ProcessEvents> process;  // perf backend: COMM, FORK, MMAP2
  std::unordered_map<uint32_t, uint32_t> tgid_cache;
  aggregate::StackCounts counts{kStacks, kKeys};
  uint64_t lost_reported = 0;
  perf::CutStacks cut;  // perf callchains cut at sample_max_stack
  std::optional<perf::UserUnwinder> unwinder;  // --call-graph dwarf
  // Probes at user functions' first instructions (session::CaptureOptions::
  // entry_callers): each sample's stack top is the caller, inserted where
  // the kernel has not (perf::with_entry_caller). Which of the functions
  // start with push %rbp/endbr64 (probe::Target::frame_entry): none, all,
  // or some, then looked up by the sampled address, once per process.
  bool entry_callers = false;
  enum class FrameEntry : uint8_t { kNone, kAll, kSome } frame_entry = FrameEntry::kNone;
  std::map<std::pair<uint32_t, uint64_t>, bool> frame_entry_at;  // kSome: (pid, ip)
  std::vector<uint64_t> entry_frames;
  perf::ShortUserStacks short_user;             // fp: the hint
  int64_t noted_pid = -1;  // the process of the last note_process()
  int64_t started_ns = report::unix_now_ns();  // this report's start, for the -o files
  // perf backend: the tracing machinery's frames are stripped from kernel
  // stacks as they come in (the ftrace reader strips its own).
  symbols::KernelSymbols ksyms;
  symbols::TracingFrames tracing{&ksyms};
  // ftrace backend: the events of kprobes at functions' entries, whose
  // stacks get the probed function where the unwinder left it out
  // (entry_frame.hpp), and the frames built for that.
  std::unordered_set<int> entry_kprobes;
  int function_event = -1;  // ftrace:function's id, with the function tracer
  std::vector<uint64_t> entry_frame;
  // perf backend: records read while ksyms still loads, read once it is
  // (util/backlog.hpp): the rings are emptied meanwhile.
  Backlog early;

  void take(const perf_event_header& h, std::span<const uint8_t> rec) {
    if (kernel_stacks && !ksyms.loaded() && early.hold(0, rec)) return;
    if (!early.empty()) replay();
    on_perf(h, rec);
  }

  // Reads what early holds (waiting for ksyms), in the order it came.
  void replay() {
    early.replay([&](uint64_t, std::span<const uint8_t> rec) {
      perf_event_header h;
      std::memcpy(&h, rec.data(), sizeof h);
      on_perf(h, rec);
    });
  }

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
    std::string_view comm = o.per_pid ? names.comm(pid, tid, cpu) : std::string_view();
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
      if (auto m = user_syms->mapping(static_cast<pid_t>(pid), user[0]))
        it->second = probe::entry_sets_frame(std::string(m->path), m->offset + user[0] - m->start);
    return it->second;
  }

  void on_perf(const perf_event_header& h, std::span<const uint8_t> rec) {
    if (h.type != PERF_RECORD_SAMPLE) {
      process->handle(h, rec);
      noted_pid = -1;  // an exit may have made user_syms forget it
      return;
    }
    perf::Sample s;
    if (!perf::decode_sample(perf->attr().sample_type, rec, s, perf->attr().sample_regs_user))
      return;
    if (perf->duplicate(s)) return;
    if (drop_compat && s.regs_abi == PERF_SAMPLE_REGS_ABI_32) return;
    auto chains = perf::split_callchain(s.callchain);
    cut.note(chains);
    std::optional<std::span<const uint64_t>> kernel, user;
    // A syscall tracepoint's perf sample is taken on the syscall's user
    // registers: no kernel frames, and none from its raw_syscalls stand-in
    // (not asked for; a kernel before 3.7 gives them anyway).
    if (kernel_stacks) kernel = raw_syscalls ? chains.kernel.first(0) : tracing.strip(chains.kernel);
    if (user_stacks) {
      if (unwinder) {
        chains.user = unwinder->frames(s);
      } else {
        if (entry_callers)
          if (auto top = perf::stack_top(s))
            chains.user = perf::with_entry_caller(chains.user, *top,
                                                  frame_entry_of(s.pid, chains.user), entry_frames);
        short_user.note(s.pid, chains.user, *user_syms);
      }
      user = chains.user;
      // Once per run of samples of one process: a hash lookup per sample
      // was 6% of the reader's time at 400k events/s.
      if (!chains.user.empty() && static_cast<int64_t>(s.pid) != noted_pid) {
        user_syms->note_process(static_cast<pid_t>(s.pid));
        noted_pid = s.pid;
      }
    }
    count(s.pid, s.tid, s.cpu, kernel, user);
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

  // Which stacks, from where.
  bool want_user = !o.kernel_only;
  bool want_kernel = !o.user_only;
  session::Backend backend = o.backend;
  bool needs_ftrace = !impl->trace->probes().functions().empty();
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
  impl->kernel_stacks = want_kernel;
  impl->user_stacks = want_user;
  // Frame-pointer user stacks of probes at functions' entries miss the
  // callers: the stack top names them (x86_64: the return address is
  // there at a function's first instruction).
  const bool at_entry =
      std::all_of(targets->begin(), targets->end(), [](const probe::Target& t) { return t.at_entry; });
#if defined(__x86_64__)
  if (backend == session::Backend::kPerf && want_user && !o.call_graph.dwarf() && at_entry) {
    auto& features = kernel::Features::host();
    impl->entry_callers = features.has(kernel::Feature::kUserStack);
    if (!impl->entry_callers)
      warn << "stackcount: the callers of the probed functions are missing from the user stacks: "
           << features.missing(kernel::Feature::kUserStack).message << "\n";
    size_t framed = std::count_if(targets->begin(), targets->end(),
                                  [](const probe::Target& t) { return t.frame_entry; });
    impl->frame_entry = framed == 0                 ? Impl::FrameEntry::kNone
                        : framed == targets->size() ? Impl::FrameEntry::kAll
                                                    : Impl::FrameEntry::kSome;
  }
#endif

  if (backend == session::Backend::kPerf &&
      std::all_of(targets->begin(), targets->end(),
                  [](const probe::Target& t) {
                    return t.kind == probe::Kind::kTracepoint && t.system == syscalls::kSystem;
                  }) &&
      std::any_of(targets->begin(), targets->end(),
                  [](const probe::Target& t) { return t.syscall_nr >= 0; })) {
    auto& features = kernel::Features::host();
    impl->drop_compat = features.has(kernel::Feature::kUserStack);
    if (!impl->drop_compat)
      warn << "stackcount: 32-bit processes' system calls are counted too, as the calls of the "
              "same numbers: "
           << features.missing(kernel::Feature::kUserStack).message << "\n";
  }

  session::CaptureOptions co;
  co.cpu = o.cpu;
  co.pid = o.pid;
  co.call_graph = o.call_graph;
  co.entry_callers = impl->entry_callers;
  if (backend == session::Backend::kFtrace) {
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
    co.stack_option = std::any_of(targets->begin(), targets->end(), [](const probe::Target& t) {
      return t.kind == probe::Kind::kKernel;
    });
    co.event_formats = false;  // on_ftrace reads the pid and the stack only
    // The instance's ring as big as the perf backend's (perf_ring_pages):
    // 4 MiB per CPU on up to 8 CPUs, where the kernel's default is 1.4 MiB.
    // Two unpaced loops on 2 CPUs overran the default by 6,232 events of 2 M.
    const auto online = perf::online_cpus();
    co.buffer_kb = session::perf_ring_pages(online ? online->size() : 1) *
                   (static_cast<size_t>(getpagesize()) / 1024);
    if (auto st = impl->trace->read_with_ftrace(co, warn); !st) return st.error();
    impl->ftrace = impl->trace->ftrace();
    if (o.per_pid) impl->saved_comms.emplace(*dir);
    if (want_kernel) {
      impl->entry_kprobes = entry_kprobe_ids(impl->trace->probes(), *targets);
      if (needs_ftrace) impl->function_event = function_event_id(*dir);
      if (!impl->entry_kprobes.empty() || impl->function_event >= 0)
        if (auto k = symbols::KernelSymbols::load()) impl->ksyms = std::move(*k);
    }
  } else {
    co.regs_abi = impl->drop_compat;
    if (auto st = impl->trace->read_with_perf(co, want_kernel && !impl->raw_syscalls, want_user);
        !st)
      return st.error();
    impl->perf = impl->trace->perf();
    impl->cut = perf::CutStacks(impl->perf->attr());
    if (want_user && o.call_graph.dwarf())
      impl->unwinder.emplace(o.call_graph, impl->perf->attr(), *impl->user_syms);
    if (want_kernel)
      if (auto k = symbols::KernelSymbols::load()) impl->ksyms = std::move(*k);
    impl->process = std::make_unique<perf::ProcessEvents>(impl->names, *impl->user_syms,
                                                          impl->perf->attr());
    if (auto st = impl->perf->events().enable(); !st) return st.error();
    // The traced process exists now: its mappings are read while it does,
    // for its samples may be read only after it has exited (no MMAP2
    // records come for what it mapped before the events were enabled).
    if (o.pid && want_user) impl->user_syms->note_process(*o.pid);
  }
  // Likewise its name, and every other task's under -P without -p: a task
  // that existed before the events were enabled gets no COMM record.
  if (o.per_pid)
    impl->names.note_existing(o.pid ? std::optional<uint32_t>(static_cast<uint32_t>(*o.pid))
                                    : std::nullopt);
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
    m.perf->events().wait(timeout_ms);
    m.perf->events().drain(
        [&](int, const perf_event_header& h, std::span<const uint8_t> r) { m.take(h, r); },
        SIZE_MAX, [] { return cli::stop_requested(); });
    if (!m.early.empty() && m.ksyms.loaded()) m.replay();
  }
}

void Counter::stop() {
  Impl& m = *impl_;
  if (m.ftrace) {
    (void)m.ftrace->instance().set_tracing_on(false);
    m.ftrace->flush([&](const ftrace::Event& e) { m.on_ftrace(e); });
  } else {
    (void)m.perf->events().disable();
    m.perf->events().drain([&](int, const perf_event_header& h, std::span<const uint8_t> r) {
      m.take(h, r);
    });
    m.replay();
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
  uint64_t lost = m.ftrace ? m.ftrace->lost_events() : m.perf->events().lost();
  p.start_unix_ns = m.started_ns;
  p.totals.lost_events = lost - m.lost_reported;
  p.totals.truncated_stacks = m.cut.count() + (m.unwinder ? m.unwinder->cut() : 0);
  report::Report r = report::build_report(m.counts, m.user_syms.get(), p, err);
  // Names of threads whose samples came before the records naming them.
  if (m.o.per_pid) {
    perf::TaskNames::Fallback saved;
    if (m.saved_comms)
      saved = [&m](uint32_t tid) { return m.saved_comms->known(static_cast<int>(tid)); };
    for (auto& rec : r.records) rec.comm = m.names.settle(rec.comm, saved);
  }
  // The report holds what it prints: the tables start over before it is
  // printed, and their pages go back to the kernel (malloc keeps freed
  // heap pages resident otherwise), so that printing and the -o files'
  // structures peak below what counting and the report took together.
  m.counts = aggregate::StackCounts(kStacks, kKeys);
  malloc_trim(0);
  report::print_report(out, err, r, p);
  m.started_ns = report::unix_now_ns();  // the next interval's

  if (lost > m.lost_reported) {
    err << "WARNING: " << (lost - m.lost_reported)
        << " events lost: the ring buffer was full; the counts are short by that much.\n";
    m.lost_reported = lost;
  }
  m.cut.warn(err);
  if (m.unwinder) m.unwinder->warn(err);
  m.short_user.hint(err);
}

}  // namespace tracekit::stackcount
