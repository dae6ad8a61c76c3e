#include "profile/profiler.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "aggregate/stack_counts.hpp"
#include "perf/per_cpu.hpp"
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "perf/syscall_regs.hpp"
#include "perf/task_names.hpp"
#include "perf/user_unwind.hpp"
#include "report/stack_records.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/stack_roots.hpp"
#include "symbols/user.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::profile {

namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
constexpr size_t kRingPages = 128;
// --call-graph dwarf: each sample carries its stack copy (8 KiB by
// default), so the rings are larger.
constexpr size_t kDwarfRingPages = 1024;
// Records read from each ring per poll(): at the highest rates the rings
// fill faster than they are read, and a poll that emptied them all would let
// a stop request wait behind a great deal of work; what is left is read by
// the next poll (whose wait returns at once while a ring is past its
// watermark). Well under a millisecond of work.
constexpr size_t kRecordsPerPoll = 256;

std::string id_list(const std::vector<int>& ids) {
  if (ids.size() == 1) return std::to_string(ids[0]);
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s + "]";
}

Status check_machine(const Options& o) {
  for (int pid : o.pids)
    if (!process_exists(pid))
      return no_process_error(pid);
  for (int tid : o.tids)
    if (!process_exists(tid))
      return Error{0, "no thread with TID " + std::to_string(tid), {}, "check the TID with ps -eLf"};
  auto max = read_file("/proc/sys/kernel/perf_event_max_sample_rate");
  if (max.ok()) {
    auto rate = parse_int<long>(trim(*max));
    if (rate) return check_rate(o, *rate);
  }
  return {};
}

}  // namespace

Status check_rate(const Options& o, long max_rate) {
  if (max_rate <= 0) return {};
  const char* sysctl = "raise kernel.perf_event_max_sample_rate with sysctl";
  if (!o.count) {
    if (o.frequency <= max_rate) return {};
    return Error{0,
                 "frequency " + std::to_string(o.frequency) +
                     " Hertz is above this kernel's limit of " + std::to_string(max_rate),
                 {}, std::string("lower -F, or ") + sysctl};
  }
  // -c COUNT samples every COUNT ns of CPU time: 1e9 / COUNT per second on
  // a busy CPU, held to the same limit as -F.
  constexpr uint64_t kNsPerSec = 1000000000;
  const auto rate = static_cast<uint64_t>(max_rate);
  uint64_t min_count = (kNsPerSec + rate - 1) / rate;
  if (*o.count >= min_count) return {};
  return Error{0,
               "count " + std::to_string(*o.count) + " (a sample every " +
                   std::to_string(*o.count) + " ns of CPU time) is above this kernel's limit of " +
                   std::to_string(max_rate) + " samples per second",
               {}, "use -c " + std::to_string(min_count) + " or more, or " + sysctl};
}

std::string lost_warning(const Options& o, uint64_t lost) {
  return "WARNING: " + std::to_string(lost) +
         " samples lost: the perf ring buffer overflowed. Consider " +
         (o.count ? "raising -c." : "lowering -F.") + "\n";
}

std::string header(const Options& o) {
  std::ostringstream s;
  s << "Sampling at ";
  if (o.count)
    s << "every " << *o.count << " events";
  else
    s << o.frequency << " Hertz";
  s << " of ";
  if (!o.pids.empty())
    s << "PID " << id_list(o.pids);
  else if (!o.tids.empty())
    s << "TID " << id_list(o.tids);
  else
    s << "all threads";
  s << " by " << (o.user_only ? "user" : o.kernel_only ? "kernel" : "user + kernel") << " stack";
  if (o.cpu) s << " on CPU#" << *o.cpu;
  if (o.duration)
    s << " for " << static_cast<long>(*o.duration) << " secs.";
  else
    s << "... Hit Ctrl-C to end.";
  return s.str();
}

struct Profiler::Impl {
  Options o;
  std::function<bool()> stop_requested;  // start()'s stop
  uint64_t sample_type;
  perf::PerCpuEvents events;
  perf::TaskNames names;
  symbols::UserSymbols user_syms;
  perf::ProcessEvents process;  // refers to names and user_syms
  aggregate::StackCounts counts;
  uint64_t samples = 0;
  perf::CutStacks cut;
  std::optional<perf::UserUnwinder> unwinder;  // --call-graph dwarf
  perf::ShortUserStacks short_user;             // fp: the hint
  Fd syscall_regs;                   // perf::full_syscall_regs, held for the run
  std::string syscall_regs_warning;  // ... or why not
  int64_t started_ns = report::unix_now_ns();  // for the -o files' times
  // Kernel symbols, loading in the background from the start: the report
  // shares the table (KernelSymbols::load), rather than waiting 100-200 ms
  // after Ctrl-C for /proc/kallsyms.
  symbols::KernelSymbols ksyms;

  Impl(const Options& opts, perf::PerCpuEvents ev, const perf_event_attr& attr,
       std::function<bool()> stop)
      : o(opts),
        stop_requested(std::move(stop)),
        sample_type(attr.sample_type),
        events(std::move(ev)),
        process(names, user_syms, attr),
        counts(opts.stack_storage, opts.hash_storage),
        cut(attr) {
    if (o.call_graph.dwarf()) unwinder.emplace(o.call_graph, attr, user_syms);
  }

  bool wanted(uint32_t pid, uint32_t tid) const {
    if (tid == 0 && !o.include_idle) return false;
    auto has = [](const std::vector<int>& v, uint32_t id) {
      return std::find(v.begin(), v.end(), static_cast<int>(id)) != v.end();
    };
    if (!o.pids.empty() && !has(o.pids, pid)) return false;
    if (!o.tids.empty() && !has(o.tids, tid)) return false;
    return true;
  }

  void consume(int /*cpu*/, const perf_event_header& h, std::span<const uint8_t> rec) {
    if (h.type != PERF_RECORD_SAMPLE) {
      process.handle(h, rec);
      return;
    }
    perf::Sample s;
    if (!perf::decode_sample(sample_type, rec, s, perf::kUnwindRegsMask)) return;
    if (!wanted(s.pid, s.tid)) return;
    ++samples;
    auto chains = perf::split_callchain(s.callchain);
    cut.note(chains);
    if (unwinder && !o.kernel_only)
      chains.user = unwinder->frames(s);
    else if (!o.kernel_only)
      short_user.note(s.pid, chains.user, user_syms);
    if (!o.kernel_only && s.pid != 0 && !chains.user.empty())
      user_syms.note_process(static_cast<pid_t>(s.pid));
    std::optional<std::span<const uint64_t>> kernel, user;
    if (!o.user_only) kernel = chains.kernel;
    if (!o.kernel_only) user = chains.user;
    counts.add(s.pid, names.comm(s.pid, s.tid, s.cpu), kernel, user, 1);
  }
};

Profiler::Profiler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Profiler::Profiler(Profiler&&) noexcept = default;
Profiler::~Profiler() = default;

Result<Profiler> Profiler::start(const Options& o, std::function<bool()> stop) {
  if (auto st = check_machine(o); !st) return st.error();

  std::vector<int> cpus;
  auto online = perf::online_cpus();
  if (!online) return online.error();
  if (o.cpu) {
    if (auto ok = perf::check_cpu_online(*o.cpu); !ok) return ok.error();
    cpus = {*o.cpu};
  } else {
    cpus = *online;
  }

  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  if (o.count) {
    attr.sample_period = *o.count;
  } else {
    attr.freq = 1;
    attr.sample_freq = static_cast<uint64_t>(o.frequency);
  }
  attr.sample_type = kSampleType;
  attr.disabled = 1;
  // dwarf: the kernel's callchain gives the kernel side only; the user side
  // is unwound from the sampled registers and stack.
  const bool dwarf = o.call_graph.dwarf();
  perf::request_callchains(attr, !o.user_only, !o.kernel_only && !dwarf);
  if (dwarf)
    if (auto st = perf::request_user_stack(attr, o.call_graph); !st) return st.error();
  const size_t ring_pages = dwarf ? kDwarfRingPages : kRingPages;
  // Wake the reader when a quarter of the ring is used; poll() timeouts drain
  // the rest, so low rates are still read promptly.
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(ring_pages * 4096 / 4);
  // COMM, FORK, MMAP2: names, and mappings of processes that are gone by the
  // time their samples are read.
  perf::request_process_events(attr);

  auto events = perf::PerCpuEvents::open(attr, cpus, -1, ring_pages);
  if (!events) return events.error();
  auto impl = std::make_unique<Impl>(o, std::move(*events), attr, std::move(stop));
  // Samples in a system call: the full user registers where the kernel's
  // fast path would not save them (perf/syscall_regs.hpp).
  if (!o.kernel_only) {
    auto dir = tracefs::tracing_dir();
    auto regs = dir ? perf::full_syscall_regs(*dir) : Result<Fd>(dir.error());
    if (regs)
      impl->syscall_regs = std::move(*regs);
    else
      impl->syscall_regs_warning = perf::syscall_regs_warning(regs.error());
  }
  if (!o.user_only)
    if (auto k = symbols::KernelSymbols::load()) impl->ksyms = std::move(*k);
  if (auto st = impl->events.enable(); !st) return st.error();
  // Tasks that existed before the events were enabled get no COMM or MMAP2
  // records: their names (and with -p, the processes' mappings) are read
  // now, while they live, for their samples may be read after they exit.
  if (o.pids.empty()) impl->names.note_existing();
  for (int pid : o.pids) {
    impl->names.note_existing(static_cast<uint32_t>(pid));
    if (!o.kernel_only) impl->user_syms.note_process(pid);
  }
  return Profiler(std::move(impl));
}

uint64_t Profiler::samples() const { return impl_->samples; }

void Profiler::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.events.wait(timeout_ms);
  m.events.drain(
      [&](int cpu, const perf_event_header& h, std::span<const uint8_t> r) {
        m.consume(cpu, h, r);
      },
      kRecordsPerPoll, [&] { return m.stop_requested && m.stop_requested(); });
}

void Profiler::stop() {
  Impl& m = *impl_;
  (void)m.events.disable();
  m.events.drain([&](int cpu, const perf_event_header& h, std::span<const uint8_t> r) {
    m.consume(cpu, h, r);
  });
}

void Profiler::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  report::PrintOptions p;
  p.style.delimiter = m.o.delimited && !m.o.user_only && !m.o.kernel_only;
  p.style.annotate_kernel = m.o.annotate;
  p.folded = m.o.folded;
  p.kernel_symbols = !m.o.user_only;
  p.output = &m.o.output;
  p.tool = "profile";
  p.value_unit = report::Unit::kSamples;
  // cpu-clock counts nanoseconds: -c's count is the period itself.
  p.period_ns = m.o.count ? *m.o.count : 1000000000ull / static_cast<uint64_t>(m.o.frequency);
  p.start_unix_ns = m.started_ns;
  p.totals.lost_events = m.events.lost();
  p.totals.truncated_stacks = m.cut.count() + (m.unwinder ? m.unwinder->cut() : 0);
  err << m.syscall_regs_warning;
  report::Report r = report::build_report(m.counts, &m.user_syms, p, err);
  symbols::trim_past_stack_roots(r.records, r.frames);
  // Names of threads whose samples came before the records naming them.
  for (auto& rec : r.records) rec.comm = m.names.settle(rec.comm);
  report::print_report(out, err, r, p);
  if (m.events.lost() > 0) err << lost_warning(m.o, m.events.lost());
  m.cut.warn(err);
  if (m.unwinder) m.unwinder->warn(err);
  m.short_user.hint(err);
}

}  // namespace tracekit::profile
