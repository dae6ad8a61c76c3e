#include "offcputime/offcputime.hpp"

#include <sys/ioctl.h>
#include <time.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "aggregate/stack_counts.hpp"
#include "kernel/features.hpp"
#include "offcputime/pairing.hpp"
#include "offcputime/task_state.hpp"
#include "perf/follow.hpp"
#include "perf/per_cpu.hpp"
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "perf/syscall_regs.hpp"
#include "perf/user_unwind.hpp"
#include "perf/task_names.hpp"
#include "report/stack_records.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/stack_roots.hpp"
#include "symbols/tracing_frames.hpp"
#include "symbols/user.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/filter.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::offcpu {

namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
// sched_switch can run at a hundred thousand times a second per CPU, each
// record carrying up to 127 frames (about 300 bytes at 20): a reader kept
// off the CPU for 30 ms by other work fills a 2 MiB ring (records lost in 3
// of 17 runs of perf bench sched pipe on a loaded 2-CPU VM; none in 6 with
// 8 MiB, at the same cost per switch). So: up to 32 MiB of rings in all,
// each between 2 and 8 MiB (a power of two, as perf requires).
constexpr size_t kRingBytesTotal = 32u << 20, kMinRingPages = 512, kMaxRingPages = 2048;
size_t ring_pages(size_t cpus) {
  size_t pages = kMinRingPages;
  while (pages * 2 <= kMaxRingPages && pages * 2 * 4096 * cpus <= kRingBytesTotal) pages *= 2;
  return pages;
}
// Events reach the rings within microseconds of their timestamps; everything
// older than this behind the clock is in the rings when a drain starts.
constexpr uint64_t kHorizonMarginNs = 20'000'000;
constexpr uint32_t kPfKthread = 0x00200000;
// -p: the per-CPU events sample no switch-out (no task has a negative pid);
// they stay for the switch-in records and the rings.
constexpr const char* kNeverFilter = "prev_pid < 0";

uint64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

std::string header(const Options& o) {
  std::ostringstream s;
  s << "Tracing off-CPU time (us) of ";
  if (o.pid)
    s << "PID " << *o.pid;
  else if (o.tid)
    s << "TID " << *o.tid;
  else if (o.user_threads_only)
    s << "user threads";
  else if (o.kernel_threads_only)
    s << "kernel threads";
  else
    s << "all threads";
  s << " by "
    << (o.user_stacks_only ? "user" : o.kernel_stacks_only ? "kernel" : "user + kernel")
    << " stack";
  if (o.duration)
    s << " for " << static_cast<long>(*o.duration) << " secs.";
  else
    s << "... Hit Ctrl-C to end.";
  return s.str();
}

struct Tracer::Impl {
  Options o;
  tracefs::EventFormat format;
  const tep_format_field* f_prev_pid = nullptr;
  const tep_format_field* f_prev_state = nullptr;
  const tep_format_field* f_prev_comm = nullptr;
  const tep_format_field* f_next_pid = nullptr;
  // sched:sched_wakeup, sampled where there are no switch records.
  std::optional<tracefs::EventFormat> wakeup;
  const tep_format_field* f_wakeup_pid = nullptr;
  // Kernels without context-switch records (before 4.3): switch-ins come
  // from the sampled sched_switch's next_pid, every switch sampled.
  bool switch_records = true;
  // System-wide with switch records: switch-ins from next_pid too, every
  // switch sampled, and switch records only on the CPUs that need them
  // (offcpu/pairing.hpp, SwitchChains): a dummy event per CPU writes them
  // into its ring while sideband[i] is open.
  bool chained = false;
  std::optional<SwitchChains> chains;
  perf_event_attr sideband_attr{};
  std::vector<Fd> sideband;     // by ring index
  uint64_t sideband_lost = 0;   // the own lost counts of closed dummy events
  std::vector<int> ring_of_cpu;  // CPU number -> ring index
  // Kernels without use_clockid (before 4.1): records carry perf's own
  // clock; the horizon follows the newest record time seen.
  bool monotonic = true;
  uint64_t newest = 0;
  std::optional<perf::PerCpuEvents> events;
  Fd syscall_regs;                   // perf::full_syscall_regs, held for the run
  std::string syscall_regs_warning;  // ... or why not
  perf::TaskNames names;  // unused names: comms come from prev_comm
  symbols::UserSymbols user_syms;
  std::unique_ptr<perf::ProcessEvents> process_events;  // refers to names and user_syms
  aggregate::StackCounts counts;
  Pairer pairer;
  TimeOrder order;
  TaskStates states{format};  // refers to format
  std::unordered_map<uint32_t, bool> kthread;
  // By counted thread: its tgid, and the name and stacks of its last
  // counted switch-out, which its next one (a thread blocking where it
  // blocked before) can take without hashing them (side_again()).
  struct Thread {
    uint32_t tgid = 0;
    uint32_t comm = UINT32_MAX;
    aggregate::StackId kernel = aggregate::kNoStack;
    aggregate::StackId user = aggregate::kNoStack;
  };
  std::unordered_map<uint32_t, Thread> threads;
  perf::FollowedThreads followed;  // -p: late threads (see perf/follow.hpp)
  // -p: each switch-out of a traced thread comes as its sched_switch sample
  // and, right after it in the same CPU's ring (both are written with
  // interrupts off in the switch), the CPU's switch-out record. A record
  // with no sample before it is a switch-out the kernel did not sample; the
  // period it began cannot be counted (it has no stack), and the report
  // says how many. last_sample: by CPU, the traced thread whose sample came
  // last, 0 after a record, kNoSampleYet before the CPU's first sample (a
  // record then may predate the threads' events, enabled after the CPU's).
  static constexpr uint32_t kNoSampleYet = UINT32_MAX;
  bool audit = false;
  std::vector<uint32_t> last_sample;
  uint64_t unsampled = 0;
  uint64_t sample_type = 0;        // of every event sharing the rings
  uint64_t lost = 0;
  perf::CutStacks cut;
  std::optional<perf::UserUnwinder> unwinder;  // --call-graph dwarf
  perf::ShortUserStacks short_user;             // fp: the hint
  uint64_t undecodable = 0;
  int64_t started_ns = report::unix_now_ns();  // for the -o files' times
  // The tracepoint's own frames (perf_trace_sched_switch, ...) are stripped
  // from kernel stacks as they come in.
  symbols::KernelSymbols ksyms;
  symbols::TracingFrames tracing{&ksyms};

  Impl(const Options& opts, tracefs::EventFormat f)
      : o(opts), format(std::move(f)), counts(opts.stack_storage, opts.hash_storage) {}

  bool is_kernel_thread(uint32_t tid) {
    auto it = kthread.find(tid);
    if (it != kthread.end()) return it->second;
    bool k = false;
    // /proc/TID/stat: "pid (comm) state ppid ... flags" with flags the 9th
    // field; comm may hold spaces and parentheses, so count from the last ')'.
    auto stat = read_file("/proc/" + std::to_string(tid) + "/stat");
    if (stat) {
      auto close = stat->rfind(')');
      if (close != std::string::npos) {
        auto fields = split(trim(std::string_view(*stat).substr(close + 1)), ' ');
        if (fields.size() > 6)
          if (auto flags = parse_int<uint32_t>(fields[6])) k = (*flags & kPfKthread) != 0;
      }
    }
    kthread.emplace(tid, k);
    return k;
  }

  // The dummy event writing switch records into ring i, on or off.
  Status set_sideband(size_t i, bool on) {
    if (!on) {
      close_sideband(i);
      return {};
    }
    const int cpu = events->cpus()[i];
    auto fd = perf::open_event(sideband_attr, -1, cpu);
    if (!fd) return fd.error();
    if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, events->ring_fd(i)) != 0)
      return Error::from_errno("cannot share the ring of perf events",
                               "CPU " + std::to_string(cpu));
    sideband[i] = std::move(*fd);
    return {};
  }

  // Closes ring i's dummy event, keeping its own lost count (the switch
  // records it could not write) for lost().
  void close_sideband(size_t i) {
    if (!sideband[i].valid()) return;
    sideband_lost += events->own_lost(sideband[i].get());
    sideband[i] = Fd();
  }

  size_t ring_index(int cpu) const {
    return static_cast<size_t>(ring_of_cpu[static_cast<size_t>(cpu)]);
  }

  void consume(int cpu, const perf_event_header& h, std::span<const uint8_t> rec) {
    switch (h.type) {
      case PERF_RECORD_SAMPLE: {
        perf::Sample smp;
        if (!perf::decode_sample(sample_type, rec, smp, perf::kUnwindRegsMask))
          ++undecodable;
        else if (wakeup && common_type(smp.raw) == wakeup->id())
          woken(smp);
        else
          switched_out(cpu, smp);
        return;
      }
      case PERF_RECORD_SWITCH_CPU_WIDE: {
        perf::ContextSwitch cs;
        if (!perf::decode_context_switch(sample_type, rec, cs)) {
          ++undecodable;
          return;
        }
        newest = std::max(newest, cs.time);
        if (audit && cs.out && cs.pid == static_cast<uint32_t>(*o.pid)) audit_record(cs);
        if (!cs.out && cs.tid != 0) {
          SchedEvent e;
          e.kind = SchedEvent::kSwitchIn;
          e.time = cs.time;
          e.tid = cs.tid;
          order.push(e);
        }
        return;
      }
      case PERF_RECORD_LOST:
        // Periods around the gap cannot be trusted: finish what came before
        // it, then forget every open period.
        order.release_all([this](const SchedEvent& e) { process(e); });
        pairer.reset();
        if (chains) chains->lost(ring_index(cpu));
        return;
      default:
        process_events->handle(h, rec);  // COMM, FORK, MMAP2
        return;
    }
  }

  void switched_out(int cpu, const perf::Sample& smp) {
    auto prev = format.number(f_prev_pid, smp.raw);
    auto state = format.number(f_prev_state, smp.raw);
    if (!prev || !state) {
      ++undecodable;
      return;
    }
    newest = std::max(newest, smp.time);
    if (!switch_records || chained) {
      // This switch is next's switch-in (after prev's switch-out, below, at
      // the same time; TimeOrder keeps arrival order for ties).
      auto next = format.number(f_next_pid, smp.raw);
      if (!next) {
        ++undecodable;
        return;
      }
      if (chained) follow_chain(ring_index(cpu), *prev, *next, smp.time);
      if (*prev != 0) switched_out_task(smp, *prev, *state);
      if (*next != 0) {
        SchedEvent in;
        in.kind = SchedEvent::kSwitchIn;
        in.time = smp.time;
        in.tid = static_cast<uint32_t>(*next);
        order.push(in);
      }
      return;
    }
    switched_out_task(smp, *prev, *state);
  }

  void audit_record(const perf::ContextSwitch& cs) {
    if (cs.cpu >= last_sample.size()) return;
    uint32_t& last = last_sample[cs.cpu];
    if (last != cs.tid && last != kNoSampleYet) ++unsampled;
    if (last != kNoSampleYet) last = 0;
  }

  void switched_out_task(const perf::Sample& smp, uint64_t prev_pid, uint64_t prev_state) {
    if (audit && smp.pid == static_cast<uint32_t>(*o.pid) && smp.cpu < last_sample.size())
      last_sample[smp.cpu] = static_cast<uint32_t>(prev_pid);
    if (followed.duplicate(smp.tid, smp.id)) return;  // the same switch, sampled twice
    SchedEvent e;
    e.kind = SchedEvent::kSwitchOut;
    e.time = smp.time;
    e.tid = static_cast<uint32_t>(prev_pid);
    TaskState st = states.decode(prev_state, smp.raw);

    // Filters of the switch-out: which blocked periods count at all.
    bool counted = e.tid != 0 && !st.dead;
    if (counted && o.pid) counted = smp.pid == static_cast<uint32_t>(*o.pid);
    if (counted && o.tid) counted = e.tid == static_cast<uint32_t>(*o.tid);
    if (counted && o.state) counted = *o.state == 0 ? st.bits == 0 : (st.bits & *o.state) != 0;
    if (counted && (o.user_threads_only || o.kernel_threads_only))
      counted = is_kernel_thread(e.tid) == o.kernel_threads_only;
    if (counted) {
      auto chains = perf::split_callchain(smp.callchain);
      cut.note(chains);
      // The switch-out is sampled in the switching task: its user registers
      // and stack.
      if (unwinder && !o.kernel_stacks_only)
        chains.user = unwinder->frames(smp);
      else if (!o.kernel_stacks_only)
        short_user.note(smp.pid, chains.user, user_syms);
      e.counted = true;
      e.start.time = smp.time;
      e.start.tgid = smp.pid;
      Thread& t = threads[e.tid];
      t.tgid = smp.pid;
      const std::string_view comm = format.string(f_prev_comm, smp.raw);
      if (t.comm == UINT32_MAX || counts.comms.str(t.comm) != comm)
        t.comm = counts.comms.intern(comm);
      e.start.comm = t.comm;
      if (!o.user_stacks_only)
        t.kernel = e.start.kernel = side_again(t.kernel, tracing.strip(chains.kernel));
      if (!o.kernel_stacks_only) {
        t.user = e.start.user = side_again(t.user, chains.user);
        if (!chains.user.empty()) user_syms.note_process(static_cast<pid_t>(smp.pid));
      }
    }
    order.push(e);
  }

  // counts.side(frames) for a thread whose last stack on that side was
  // last: last itself when the frames are the same, found by one compare.
  aggregate::StackId side_again(aggregate::StackId last, std::span<const uint64_t> frames) {
    if (last >= 0 && !frames.empty()) {
      const auto stored = counts.stacks.frames(last);
      if (stored.size() == frames.size() &&
          std::memcmp(stored.data(), frames.data(), frames.size_bytes()) == 0)
        return last;
    }
    return counts.side(frames);
  }

  // The chain of ring i's switches (offcpu/pairing.hpp, SwitchChains):
  // a switch-in it missed, and its switch records on or off.
  void follow_chain(size_t i, uint64_t prev, uint64_t next, uint64_t time) {
    auto l = chains->link(i, static_cast<uint32_t>(prev), static_cast<uint32_t>(next), time,
                          sideband[i].valid());
    if (l.missed_since) {
      SchedEvent in;
      in.kind = SchedEvent::kSwitchIn;
      in.time = *l.missed_since;
      in.tid = static_cast<uint32_t>(prev);
      order.push(in);
    }
    if (l.action == SwitchChains::Action::kNone) return;
    // A failure to reopen leaves the CPU as it is: its misses are counted.
    (void)set_sideband(i, l.action == SwitchChains::Action::kRestoreRecords);
  }

  // A sched_wakeup sample (kernels without switch records): see
  // offcpu/pairing.hpp.
  void woken(const perf::Sample& smp) {
    auto pid = wakeup->number(f_wakeup_pid, smp.raw);
    if (!pid) {
      ++undecodable;
      return;
    }
    newest = std::max(newest, smp.time);
    SchedEvent e;
    e.kind = SchedEvent::kWakeup;
    e.time = smp.time;
    e.tid = static_cast<uint32_t>(*pid);
    order.push(e);
  }

  // The tracepoint a raw record is of: its first field, common_type (u16).
  static int common_type(std::span<const uint8_t> raw) {
    uint16_t type = 0;
    if (raw.size() < sizeof type) return -1;
    std::memcpy(&type, raw.data(), sizeof type);
    return type;
  }

  void process(const SchedEvent& e) {
    switch (e.kind) {
      case SchedEvent::kSwitchOut:
        count(e.counted ? pairer.switch_out(e.tid, e.start) : pairer.ignore(e.tid));
        return;
      case SchedEvent::kWakeup: pairer.wakeup(e.tid, e.time); return;
      case SchedEvent::kSwitchIn: count(pairer.switch_in(e.tid, e.time)); return;
    }
  }

  void count(const std::optional<Period>& p) {
    if (!p) return;
    uint64_t us = p->duration_ns() / 1000;
    if (us < o.min_us || us > o.max_us) return;
    counts.counts.add({p->tid, p->start.comm, p->start.kernel, p->start.user}, us);
  }

  void drain(uint64_t horizon) {
    events->drain([this](int cpu, const perf_event_header& h, std::span<const uint8_t> r) {
      consume(cpu, h, r);
    });
    order.release(horizon, [this](const SchedEvent& e) { process(e); });
  }
};

Tracer::Tracer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer::~Tracer() = default;

Result<Tracer> Tracer::start(const Options& o) {
  if (o.pid && !process_exists(*o.pid))
    return no_process_error(*o.pid);
  if (o.tid && !process_exists(*o.tid))
    return Error{0, "no thread with TID " + std::to_string(*o.tid), {},
                 "check the TID with ps -eLf"};
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto format = tracefs::EventFormat::load(*dir, "sched", "sched_switch");
  if (!format) return format.error();
  auto t = std::make_unique<Impl>(o, std::move(*format));
  // Stacks of tasks in a system call: the full user registers where the
  // kernel's fast path would not save them (perf/syscall_regs.hpp).
  if (!o.kernel_stacks_only) {
    auto regs = perf::full_syscall_regs(*dir);
    if (regs)
      t->syscall_regs = std::move(*regs);
    else
      t->syscall_regs_warning = perf::syscall_regs_warning(regs.error());
  }
  if (!o.user_stacks_only)
    if (auto k = symbols::KernelSymbols::load()) t->ksyms = std::move(*k);
  t->f_prev_pid = t->format.field("prev_pid");
  t->f_prev_state = t->format.field("prev_state");
  t->f_prev_comm = t->format.field("prev_comm");
  t->f_next_pid = t->format.field("next_pid");
  if (!t->f_prev_pid || !t->f_prev_state || !t->f_prev_comm || !t->f_next_pid)
    return Error{0, "sched:sched_switch lacks prev_pid, prev_state, prev_comm or next_pid", {},
                 "this kernel's tracepoint format is not supported"};

  // Switch-ins come from context-switch records, ordered on CLOCK_MONOTONIC
  // (offcpu/pairing.hpp); kernels without them fall back as Impl says.
  auto& features = kernel::Features::host();
  t->switch_records = features.has(kernel::Feature::kContextSwitch);
  t->monotonic = features.has(kernel::Feature::kUseClockid);
  auto cpus = perf::online_cpus();
  if (!cpus) return cpus.error();
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<uint64_t>(t->format.id());
  attr.sample_period = 1;
  attr.sample_type = kSampleType;
  // -p without switch records: the per-CPU events sample every switch (for
  // next_pid), the process's own included; no per-thread events.
  const bool follow = o.pid && t->switch_records;
  // System-wide: every switch sampled, switch records where needed.
  t->chained = t->switch_records && !o.pid && !o.tid;
  if (follow) attr.sample_type |= PERF_SAMPLE_ID;  // for FollowedThreads::duplicate
  attr.disabled = 1;
  // switch-in records: see offcpu/pairing.hpp
  attr.context_switch = t->switch_records && !t->chained;
  attr.sample_id_all = 1;                   // ... with time, tid and cpu
  if (t->monotonic) {
    attr.use_clockid = 1;
    attr.clockid = CLOCK_MONOTONIC;
  }
  // dwarf: the kernel's callchain gives the kernel side only; the user side
  // is unwound from the sampled registers and stack.
  const bool dwarf = o.call_graph.dwarf();
  perf::request_callchains(attr, !o.user_stacks_only, !o.kernel_stacks_only && !dwarf);
  if (dwarf)
    if (auto st = perf::request_user_stack(attr, o.call_graph); !st) return st.error();
  attr.watermark = 1;
  const size_t pages = ring_pages(cpus->size());
  attr.wakeup_watermark = static_cast<uint32_t>(pages * 4096 / 4);
  // FORK, MMAP2: mappings of processes gone by the time their stacks are
  // resolved.
  perf::request_process_events(attr);
  auto events = perf::PerCpuEvents::open(attr, *cpus, -1, pages);
  if (!events) return events.error();
  t->events.emplace(std::move(*events));
  t->process_events = std::make_unique<perf::ProcessEvents>(t->names, t->user_syms, attr);
  t->cut = perf::CutStacks(attr);
  if (dwarf) t->unwinder.emplace(o.call_graph, attr, t->user_syms);
  t->sample_type = attr.sample_type;
  // Only the switch-outs of the traced threads are sampled; the switch-in
  // records are side-band and not filtered. A perf tracepoint event takes
  // one filter for its life (ftrace_profile_set_filter() refuses a second
  // with EEXIST): set once, before anything else shares the rings.
  // Without switch records every switch into a traced thread is sampled too
  // (the idle task's included): -t filters on both ends, the rest in user
  // space.
  // Chained (system-wide), every switch is sampled, the idle task's
  // included: they carry the switch-ins.
  std::string filter;
  if (t->switch_records && !t->chained)
    filter = o.tid ? tracefs::equals_any("prev_pid", {*o.tid}) : kNeverFilter;
  else if (o.tid)
    filter = "prev_pid == " + std::to_string(*o.tid) + " || next_pid == " + std::to_string(*o.tid);
  if (!filter.empty())
    if (auto st = t->events->set_filter(filter); !st) return st.error();
  if (!t->switch_records) {
    // Wake-ups end the periods whose switch-in the tracepoint misses
    // (offcpu/pairing.hpp); added after the filter, which is sched_switch's.
    auto wakeup = tracefs::EventFormat::load(*dir, "sched", "sched_wakeup");
    if (!wakeup) return wakeup.error();
    t->wakeup.emplace(std::move(*wakeup));
    t->f_wakeup_pid = t->wakeup->field("pid");
    if (!t->f_wakeup_pid)
      return Error{0, "sched:sched_wakeup lacks pid", {},
                   "this kernel's tracepoint format is not supported"};
    perf_event_attr w = attr;
    w.config = static_cast<uint64_t>(t->wakeup->id());
    perf::drop_process_events(w);  // (the first event writes those)
    if (auto st = t->events->add(w); !st) return st.error();
  }
  if (follow) {
    // The process's switch-outs come from events of its own threads,
    // inherited by the threads it starts (perf/follow.hpp): the same
    // sched_switch, sampled the same way, without the side-band records the
    // per-CPU events already write.
    perf_event_attr thread = attr;
    thread.inherit = 1;
    thread.context_switch = 0;
    perf::drop_process_events(thread);
    auto followed = perf::follow_process(*t->events, {thread}, *o.pid);
    if (!followed) return followed.error();
    t->followed = std::move(*followed);
    t->audit = true;
    t->last_sample.assign(
        static_cast<size_t>(*std::max_element(cpus->begin(), cpus->end())) + 1,
        Impl::kNoSampleYet);
  }
  if (t->chained) {
    // Every CPU starts with switch records, written by a dummy event into
    // its ring, before the samples begin; SwitchChains drops them where the
    // tracepoint proves enough.
    perf_event_attr& sb = t->sideband_attr;
    sb = t->events->counting_lost(attr);  // own_lost() reads its count
    sb.type = PERF_TYPE_SOFTWARE;
    sb.config = PERF_COUNT_SW_DUMMY;
    sb.sample_period = 0;
    sb.disabled = 0;
    sb.watermark = 0;
    sb.wakeup_events = 0;
    sb.context_switch = 1;
    perf::drop_process_events(sb);
    const auto& ring_cpus = t->events->cpus();
    t->sideband.resize(ring_cpus.size());
    const int max_cpu = *std::max_element(ring_cpus.begin(), ring_cpus.end());
    t->ring_of_cpu.assign(static_cast<size_t>(max_cpu) + 1, 0);
    for (size_t i = 0; i < ring_cpus.size(); ++i) {
      t->ring_of_cpu[static_cast<size_t>(ring_cpus[i])] = static_cast<int>(i);
      if (auto st = t->set_sideband(i, true); !st) return st.error();
    }
    t->chains.emplace(ring_cpus.size());
  }
  if (auto st = t->events->enable(); !st) return st.error();
  // The traced process exists now: its mappings are read while it does,
  // for its samples may be read after it has exited (no MMAP2 records come
  // for what it mapped before the events were enabled).
  if (o.pid && !o.kernel_stacks_only) t->user_syms.note_process(*o.pid);
  return Tracer(std::move(t));
}

void Tracer::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.events->wait(timeout_ms);
  if (m.monotonic) {
    uint64_t now = monotonic_ns();
    m.drain(now > kHorizonMarginNs ? now - kHorizonMarginNs : 0);
    return;
  }
  // Perf's own clock cannot be read from here: the newest record time seen
  // before this pass stands for "now" (records of a quiet CPU wait a pass).
  uint64_t seen = m.newest;
  m.drain(seen > kHorizonMarginNs ? seen - kHorizonMarginNs : 0);
}

void Tracer::stop() {
  Impl& m = *impl_;
  (void)m.events->disable();
  for (size_t i = 0; i < m.sideband.size(); ++i) m.close_sideband(i);
  m.drain(UINT64_MAX);
  m.lost = m.events->lost(m.sideband_lost);
}

void Tracer::report(std::ostream& out, std::ostream& err) {
  Impl& m = *impl_;
  report::PrintOptions p;
  p.style.delimiter = m.o.delimited && !m.o.user_stacks_only && !m.o.kernel_stacks_only;
  p.style.offsets = m.o.offsets;
  p.style.addresses = m.o.addresses && !m.o.folded;
  p.folded = m.o.folded;
  p.kernel_symbols = !m.o.user_stacks_only;
  p.unit = "off-CPU periods";
  p.output = &m.o.output;
  p.tool = "offcputime";
  p.value_unit = report::Unit::kMicroseconds;
  p.start_unix_ns = m.started_ns;
  p.totals.lost_events = m.lost;
  p.totals.truncated_stacks = m.cut.count() + (m.unwinder ? m.unwinder->cut() : 0);
  // Keys hold thread IDs; user stacks resolve in their process.
  p.symbol_pid = [&m](uint32_t tid) {
    auto it = m.threads.find(tid);
    return it == m.threads.end() ? tid : it->second.tgid;
  };
  err << m.syscall_regs_warning;
  report::Report r = report::build_report(m.counts, &m.user_syms, p, err);
  symbols::trim_past_stack_roots(r.records, r.frames);
  report::print_report(out, err, r, p);
  if (m.lost > 0)
    err << "WARNING: " << m.lost
        << " scheduler events lost (ring buffer overflow); the periods around them were not "
           "counted.\n";
  if (m.chains && m.chains->missed() > 0)
    err << "WARNING: " << m.chains->missed()
        << " off-CPU periods may end early: sched_switch missed their switch-ins on a CPU "
           "without switch records (each ends at the CPU's last switch seen before).\n";
  if (m.unsampled > 0)
    err << "WARNING: " << m.unsampled
        << " switch-outs of traced threads had no sched_switch sample (the kernel dropped it); "
           "the off-CPU periods they began were not counted.\n";
  if (m.pairer.unended() > 0)
    err << "WARNING: " << m.pairer.unended()
        << " off-CPU periods were not counted: their thread's switch-in was never reported.\n";
  if (m.undecodable > 0) err << "WARNING: " << m.undecodable << " records could not be decoded.\n";
  m.cut.warn(err);
  if (m.unwinder) m.unwinder->warn(err);
  m.short_user.hint(err);
}

}  // namespace tracekit::offcpu
