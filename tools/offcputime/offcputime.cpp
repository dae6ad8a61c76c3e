#include "offcputime/offcputime.hpp"

#include <time.h>

#include <algorithm>
#include <cstring>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "aggregate/stack_counts.hpp"
#include "kernel/features.hpp"
#include "offcputime/pairing.hpp"
#include "offcputime/switch_records.hpp"
#include "offcputime/task_state.hpp"
#include "perf/event.hpp"
#include "perf/follow.hpp"
#include "perf/process_events.hpp"
#include "perf/stack_sampler.hpp"
#include "output/print_report.hpp"
#include "report/stack_records.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/filter.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::offcpu {

namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
// Events reach the rings within microseconds of their timestamps; everything
// older than this behind the clock is in the rings when a drain starts.
constexpr uint64_t kHorizonMarginNs = 20'000'000;
// -p: the per-CPU events sample no switch-out (no task has a negative pid);
// they stay for the switch-in records and the rings.
constexpr const char* kNeverFilter = "prev_pid < 0";

// The filter of the sched_switch events. Only the switch-outs of the
// traced threads are sampled; the switch-in records are side-band and not
// filtered. A perf tracepoint event takes one filter for its life
// (ftrace_profile_set_filter() refuses a second with EEXIST): set once,
// before anything else shares the rings. Without switch records every
// switch into a traced thread is sampled too (the idle task's included):
// -t filters on both ends, the rest in user space. Chained (system-wide),
// every switch is sampled, the idle task's included: they carry the
// switch-ins. "": no filter.
std::string switch_filter(const Options& o, bool switch_records, bool chained) {
  if (switch_records && !chained)
    return o.tid ? tracefs::equals_any("prev_pid", {*o.tid}) : kNeverFilter;
  if (o.tid)
    return "prev_pid == " + std::to_string(*o.tid) + " || next_pid == " + std::to_string(*o.tid);
  return "";
}

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
  // (offcputime/switch_records.hpp).
  bool chained = false;
  std::optional<SwitchRecords> switches;
  // Kernels without use_clockid (before 4.1): records carry perf's own
  // clock; the horizon follows the newest record time seen.
  bool monotonic = true;
  uint64_t newest = 0;
  // The events, their stacks and records (the names it keeps are unused:
  // comms come from prev_comm).
  std::optional<perf::StackSampler> sampler;
  aggregate::StackCounts counts;
  Pairer pairer;
  TimeOrder order;
  TaskStates states{format};  // refers to format
  KernelThreads kthreads;  // -u, -k
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
  int64_t started_ns = report::unix_now_ns();  // for the -o files' times

  Impl(const Options& opts, tracefs::EventFormat f)
      : o(opts), format(std::move(f)), counts(opts.stack_storage, opts.hash_storage) {}

  void sampled(int cpu, const perf::Sample& smp) {
    if (wakeup && common_type(smp.raw) == wakeup->id())
      woken(smp);
    else
      switched_out(cpu, smp);
  }

  // The records that are neither samples nor process records.
  void other(int cpu, const perf_event_header& h, std::span<const uint8_t> rec) {
    switch (h.type) {
      case PERF_RECORD_SWITCH_CPU_WIDE: {
        perf::ContextSwitch cs;
        if (!perf::decode_context_switch(sampler->attr().sample_type, rec, cs)) {
          sampler->undecodable();
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
        if (switches) switches->lost(cpu);
        return;
      default:
        return;
    }
  }

  void switched_out(int cpu, const perf::Sample& smp) {
    auto prev = format.number(f_prev_pid, smp.raw);
    auto state = format.number(f_prev_state, smp.raw);
    if (!prev || !state) {
      sampler->undecodable();
      return;
    }
    newest = std::max(newest, smp.time);
    if (!switch_records || chained) {
      // This switch is next's switch-in (after prev's switch-out, below, at
      // the same time; TimeOrder keeps arrival order for ties).
      auto next = format.number(f_next_pid, smp.raw);
      if (!next) {
        sampler->undecodable();
        return;
      }
      if (chained) follow_chain(cpu, *prev, *next, smp.time);
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
      counted = kthreads.is(e.tid) == o.kernel_threads_only;
    if (counted) {
      // The switch-out is sampled in the switching task: its user registers
      // and stack.
      const perf::SampleStacks stacks = sampler->stacks(smp);
      e.counted = true;
      e.start.time = smp.time;
      e.start.tgid = smp.pid;
      Thread& t = threads[e.tid];
      t.tgid = smp.pid;
      const std::string_view comm = format.string(f_prev_comm, smp.raw);
      if (t.comm == UINT32_MAX || counts.comms.str(t.comm) != comm)
        t.comm = counts.comms.intern(comm);
      e.start.comm = t.comm;
      if (stacks.kernel) t.kernel = e.start.kernel = side_again(t.kernel, *stacks.kernel);
      if (stacks.user) t.user = e.start.user = side_again(t.user, *stacks.user);
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

  // The chain of cpu's switches (offcputime/switch_records.hpp): a
  // switch-in it missed.
  void follow_chain(int cpu, uint64_t prev, uint64_t next, uint64_t time) {
    auto since = switches->link(cpu, static_cast<uint32_t>(prev), static_cast<uint32_t>(next), time);
    if (!since) return;
    SchedEvent in;
    in.kind = SchedEvent::kSwitchIn;
    in.time = *since;
    in.tid = static_cast<uint32_t>(prev);
    order.push(in);
  }

  // A sched_wakeup sample (kernels without switch records): see
  // offcpu/pairing.hpp.
  void woken(const perf::Sample& smp) {
    auto pid = wakeup->number(f_wakeup_pid, smp.raw);
    if (!pid) {
      sampler->undecodable();
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

  // Wake-ups end the periods whose switch-in the tracepoint misses
  // (offcpu/pairing.hpp): sched_wakeup sampled into the same rings, added
  // after the filter, which is sched_switch's. like: sched_switch's attr.
  Status add_wakeups(const std::string& tracing_dir, const perf_event_attr& like) {
    auto format = tracefs::EventFormat::load(tracing_dir, "sched", "sched_wakeup");
    if (!format) return format.error();
    wakeup.emplace(std::move(*format));
    f_wakeup_pid = wakeup->field("pid");
    if (!f_wakeup_pid)
      return Error{0, "sched:sched_wakeup lacks pid", {},
                   "this kernel's tracepoint format is not supported"};
    perf_event_attr w = like;
    w.config = static_cast<uint64_t>(wakeup->id());
    perf::drop_process_events(w);  // (the first event writes those)
    return sampler->events().add(w);
  }

  // -p: the process's switch-outs come from events of its own threads,
  // inherited by the threads it starts (perf/follow.hpp): the same
  // sched_switch as like, sampled the same way, without the side-band
  // records the per-CPU events already write.
  Status follow(const perf_event_attr& like, const std::vector<int>& cpus) {
    perf_event_attr thread = like;
    thread.inherit = 1;
    thread.context_switch = 0;
    perf::drop_process_events(thread);
    auto f = perf::follow_process(sampler->events(), {thread}, *o.pid);
    if (!f) return f.error();
    followed = std::move(*f);
    audit = true;
    last_sample.assign(static_cast<size_t>(*std::max_element(cpus.begin(), cpus.end())) + 1,
                       kNoSampleYet);
    return {};
  }

  // Reads every ring (last: and what the sampler holds), then hands out
  // the events older than horizon; none while the sampler holds records
  // (older ones may be among them).
  void drain(uint64_t horizon, bool last = false) {
    auto on_sample = [this](int cpu, const perf::Sample& s) { sampled(cpu, s); };
    auto on_other = [this](int cpu, const perf_event_header& h, std::span<const uint8_t> r) {
      other(cpu, h, r);
    };
    if (last)
      sampler->finish(on_sample, on_other);
    else
      sampler->drain(on_sample, on_other);
    if (!sampler->holding()) order.release(horizon, [this](const SchedEvent& e) { process(e); });
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
  perf::SamplerOptions so;
  so.kernel = !o.user_stacks_only;
  so.user = !o.kernel_stacks_only;
  so.call_graph = o.call_graph;
  // The tracepoint's own frames (perf_trace_sched_switch, ...) are stripped
  // from kernel stacks as they come in.
  so.strip_tracing = true;
  so.lost_hint = "the off-CPU periods around them were not counted";
  if (auto st = perf::StackSampler::prepare(attr, so, cpus->size()); !st) return st.error();
  auto sampler = perf::StackSampler::open(attr, *cpus, std::move(so));
  if (!sampler) return sampler.error();
  t->sampler.emplace(std::move(*sampler));
  perf::PerCpuEvents& events = t->sampler->events();
  if (auto filter = switch_filter(o, t->switch_records, t->chained); !filter.empty())
    if (auto st = events.set_filter(filter); !st) return st.error();
  if (!t->switch_records)
    if (auto st = t->add_wakeups(*dir, attr); !st) return st.error();
  if (follow)
    if (auto st = t->follow(attr, *cpus); !st) return st.error();
  if (t->chained) {
    // Every CPU starts with switch records, before the samples begin.
    auto switches = SwitchRecords::start(*t->sampler, attr);
    if (!switches) return switches.error();
    t->switches.emplace(std::move(*switches));
  }
  // The traced process's mappings are read while it lives (no MMAP2
  // records come for what it mapped before the events were enabled).
  if (auto st = t->sampler->enable(o.pid ? std::vector<int>{*o.pid} : std::vector<int>{}, false);
      !st)
    return st.error();
  return Tracer(std::move(t));
}

void Tracer::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.sampler->events().wait(timeout_ms);
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
  (void)m.sampler->events().disable();
  if (m.switches) m.switches->close();
  m.drain(UINT64_MAX, /*last=*/true);
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
  p.totals.lost_events = m.sampler->lost();
  p.totals.truncated_stacks = m.sampler->truncated();
  // Keys hold thread IDs; user stacks resolve in their process.
  p.symbol_pid = [&m](uint32_t tid) {
    auto it = m.threads.find(tid);
    return it == m.threads.end() ? tid : it->second.tgid;
  };
  m.sampler->warn_before(err);
  report::Report r = report::build_report(m.counts, &m.sampler->user_symbols(), p, err);
  report::trim_past_stack_roots(r.records, r.frames);
  output::print_report(out, err, r, p);
  m.sampler->warn(err);
  if (m.switches && m.switches->missed() > 0)
    err << "WARNING: " << m.switches->missed()
        << " off-CPU periods may end early: sched_switch missed their switch-ins on a CPU "
           "without switch records (each ends at the CPU's last switch seen before).\n";
  if (m.unsampled > 0)
    err << "WARNING: " << m.unsampled
        << " switch-outs of traced threads had no sched_switch sample (the kernel dropped it); "
           "the off-CPU periods they began were not counted.\n";
  if (m.pairer.unended() > 0)
    err << "WARNING: " << m.pairer.unended()
        << " off-CPU periods were not counted: their thread's switch-in was never reported.\n";
}

}  // namespace tracekit::offcpu
