#include "offcpu/offcputime.hpp"

#include <time.h>

#include <algorithm>
#include <ostream>
#include <sstream>

#include "perf/sample.hpp"
#include "report/stack_records.hpp"
#include "tracefs/filter.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::offcpu {

namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                 PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;
// sched_switch can run at tens of thousands per second per CPU, each record
// carrying up to 127 frames: 2 MiB rings, drained every 100 ms at least.
constexpr size_t kRingPages = 512;
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

std::optional<uint64_t> state_bits(std::string_view letters) {
  if (letters.empty()) return std::nullopt;
  uint64_t bits = 0;
  for (char c : letters) {
    switch (c) {
      case 'R': break;
      case '+': break;  // preempted while runnable: still R
      case '|': break;
      case 'S': bits |= 1; break;
      case 'D': bits |= 2; break;
      case 'T': bits |= 4; break;
      case 't': bits |= 8; break;
      case 'X': bits |= 16; break;
      case 'Z': bits |= 32; break;
      case 'P': bits |= 64; break;
      case 'x': bits |= 128; break;
      case 'K': bits |= 256; break;
      case 'W': bits |= 512; break;
      case 'N': bits |= 1024; break;
      case 'I': bits |= 1026; break;
      default: return std::nullopt;
    }
  }
  return bits;
}

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

Tracer::Tracer(const Options& o, tracefs::EventFormat format)
    : opts_(o),
      format_(std::move(format)),
      names_(std::make_unique<perf::TaskNames>()),
      user_syms_(std::make_unique<symbols::UserSymbols>()),
      counts_(o.stack_storage, o.hash_storage) {}

Tracer::Tracer(Tracer&&) noexcept = default;
Tracer::~Tracer() = default;

Result<Tracer> Tracer::start(const Options& o) {
  if (o.pid && !process_exists(*o.pid))
    return Error{0, "no process with PID " + std::to_string(*o.pid), {}, "check the PID with ps"};
  if (o.tid && !process_exists(*o.tid))
    return Error{0, "no thread with TID " + std::to_string(*o.tid), {},
                 "check the TID with ps -eLf"};
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto format = tracefs::EventFormat::load(*dir, "sched", "sched_switch");
  if (!format) return format.error();
  Tracer t(o, std::move(*format));
  t.f_prev_pid_ = t.format_.field("prev_pid");
  t.f_prev_state_ = t.format_.field("prev_state");
  t.f_prev_comm_ = t.format_.field("prev_comm");
  if (!t.f_prev_pid_ || !t.f_prev_state_ || !t.f_prev_comm_)
    return Error{0, "sched:sched_switch lacks prev_pid, prev_state or prev_comm", {},
                 "this kernel's tracepoint format is not supported"};

  auto cpus = perf::online_cpus();
  if (!cpus) return cpus.error();
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<uint64_t>(t.format_.id());
  attr.sample_period = 1;
  attr.sample_type = kSampleType;
  if (o.pid) attr.sample_type |= PERF_SAMPLE_ID;  // for FollowedThreads::duplicate
  attr.disabled = 1;
  attr.context_switch = 1;  // switch-in records: see offcpu/pairing.hpp
  attr.sample_id_all = 1;   // ... with time, tid and cpu
  attr.comm = 1;
  attr.comm_exec = 1;
  attr.use_clockid = 1;
  attr.clockid = CLOCK_MONOTONIC;
  perf::request_callchains(attr, !o.user_stacks_only, !o.kernel_stacks_only);
  attr.watermark = 1;
  attr.wakeup_watermark = kRingPages * 4096 / 4;
  // FORK, MMAP2: mappings of processes gone by the time their stacks are
  // resolved.
  perf::request_process_events(attr);
  auto events = perf::PerCpuEvents::open(attr, *cpus, -1, kRingPages);
  if (!events) return events.error();
  t.events_.emplace(std::move(*events));
  t.process_ = std::make_unique<perf::ProcessEvents>(*t.names_, *t.user_syms_, attr);
  t.cut_ = perf::CutStacks(attr.sample_max_stack);
  t.sample_type_ = attr.sample_type;
  // Only the switch-outs of the traced threads are sampled; the switch-in
  // records are side-band and not filtered. A perf tracepoint event takes
  // one filter for its life (ftrace_profile_set_filter() refuses a second
  // with EEXIST): set once, before anything else shares the rings.
  std::string filter = o.tid   ? tracefs::thread_filter("prev_pid", {*o.tid})
                       : o.pid ? kNeverFilter
                               : "prev_pid != 0";
  if (auto st = t.events_->set_filter(filter); !st) return st.error();
  if (o.pid) {
    // The process's switch-outs come from events of its own threads,
    // inherited by the threads it starts (perf/follow.hpp): the same
    // sched_switch, sampled the same way, without the side-band records the
    // per-CPU events already write.
    perf_event_attr thread = attr;
    thread.inherit = 1;
    thread.context_switch = 0;
    perf::drop_process_events(thread);
    auto followed = perf::follow_process(*t.events_, {thread}, *o.pid);
    if (!followed) return followed.error();
    t.followed_ = std::move(*followed);
  }
  if (auto st = t.events_->enable(); !st) return st.error();
  return t;
}

bool Tracer::is_kernel_thread(uint32_t tid) {
  auto it = kthread_.find(tid);
  if (it != kthread_.end()) return it->second;
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
  kthread_.emplace(tid, k);
  return k;
}

Tracer::StateInfo Tracer::state_of(uint64_t value, std::span<const uint8_t> raw) {
  auto it = states_.find(value);
  if (it != states_.end()) return it->second;
  // The kernel's print format says what the number means on this kernel.
  std::string text = format_.print(raw);
  StateInfo info{value, false};
  auto at = text.find("prev_state=");
  if (at != std::string::npos) {
    auto letters = std::string_view(text).substr(at + 11);
    letters = letters.substr(0, letters.find(' '));
    if (auto bits = state_bits(letters)) {
      info.bits = *bits;
      info.dead = letters.find_first_of("XZx") != std::string_view::npos;
    }
  }
  states_.emplace(value, info);
  return info;
}

void Tracer::consume(const perf_event_header& h, std::span<const uint8_t> rec) {
  switch (h.type) {
    case PERF_RECORD_SAMPLE: {
      perf::Sample smp;
      if (perf::decode_sample(sample_type_, rec, smp))
        switched_out(smp);
      else
        ++undecodable_;
      return;
    }
    case PERF_RECORD_SWITCH_CPU_WIDE: {
      perf::ContextSwitch cs;
      if (!perf::decode_context_switch(sample_type_, rec, cs)) {
        ++undecodable_;
        return;
      }
      if (!cs.out && cs.tid != 0) {
        SchedEvent e;
        e.kind = SchedEvent::kSwitchIn;
        e.time = cs.time;
        e.tid = cs.tid;
        order_.push(e);
      }
      return;
    }
    case PERF_RECORD_LOST:
      // Periods around the gap cannot be trusted: finish what came before
      // it, then forget every open period.
      order_.release_all([this](const SchedEvent& e) { process(e); });
      pairer_.reset();
      return;
    default:
      process_->handle(h, rec);  // COMM, FORK, MMAP2
      return;
  }
}

void Tracer::switched_out(const perf::Sample& smp) {
  auto prev = format_.number(f_prev_pid_, smp.raw);
  auto state = format_.number(f_prev_state_, smp.raw);
  if (!prev || !state) {
    ++undecodable_;
    return;
  }
  if (followed_.duplicate(smp.tid, smp.id)) return;  // the same switch, sampled twice
  SchedEvent e;
  e.kind = SchedEvent::kSwitchOut;
  e.time = smp.time;
  e.tid = static_cast<uint32_t>(*prev);
  StateInfo st = state_of(*state, smp.raw);

  // Filters of the switch-out: which blocked periods count at all.
  bool counted = e.tid != 0 && !st.dead;
  if (counted && opts_.pid) counted = smp.pid == static_cast<uint32_t>(*opts_.pid);
  if (counted && opts_.tid) counted = e.tid == static_cast<uint32_t>(*opts_.tid);
  if (counted && opts_.state)
    counted = *opts_.state == 0 ? st.bits == 0 : (st.bits & *opts_.state) != 0;
  if (counted && (opts_.user_threads_only || opts_.kernel_threads_only))
    counted = is_kernel_thread(e.tid) == opts_.kernel_threads_only;
  if (counted) {
    auto chains = perf::split_callchain(smp.callchain);
    cut_.note(chains);
    e.counted = true;
    e.start.time = smp.time;
    e.start.tgid = smp.pid;
    e.start.comm = counts_.comms.intern(format_.string(f_prev_comm_, smp.raw));
    if (!opts_.user_stacks_only) e.start.kernel = counts_.side(chains.kernel);
    if (!opts_.kernel_stacks_only) {
      e.start.user = counts_.side(chains.user);
      if (!chains.user.empty()) user_syms_->note_process(static_cast<pid_t>(smp.pid));
    }
    tgid_of_[e.tid] = smp.pid;
  }
  order_.push(e);
}

void Tracer::process(const SchedEvent& e) {
  if (e.kind == SchedEvent::kSwitchOut) {
    if (e.counted)
      pairer_.switch_out(e.tid, e.start);
    else
      pairer_.ignore(e.tid);
    return;
  }
  auto p = pairer_.switch_in(e.tid, e.time);
  if (!p) return;
  uint64_t us = p->duration_ns() / 1000;
  if (us < opts_.min_us || us > opts_.max_us) return;
  counts_.counts.add({p->tid, p->start.comm, p->start.kernel, p->start.user}, us);
}

void Tracer::drain(uint64_t horizon) {
  events_->drain([this](int, const perf_event_header& h, std::span<const uint8_t> r) {
    consume(h, r);
  });
  order_.release(horizon, [this](const SchedEvent& e) { process(e); });
}

void Tracer::poll(int timeout_ms) {
  events_->wait(timeout_ms);
  uint64_t now = monotonic_ns();
  drain(now > kHorizonMarginNs ? now - kHorizonMarginNs : 0);
}

void Tracer::stop() {
  (void)events_->disable();
  drain(UINT64_MAX);
  lost_ = events_->lost();
}

void Tracer::report(std::ostream& out, std::ostream& err) {
  report::PrintOptions p;
  p.style.delimiter = opts_.delimited && !opts_.user_stacks_only && !opts_.kernel_stacks_only;
  p.style.offsets = opts_.offsets;
  p.style.addresses = opts_.addresses && !opts_.folded;
  p.folded = opts_.folded;
  p.kernel_symbols = !opts_.user_stacks_only;
  p.unit = "off-CPU periods";
  p.strip_tracing_frames = true;
  // Keys hold thread IDs; user stacks resolve in their process.
  p.symbol_pid = [this](uint32_t tid) {
    auto it = tgid_of_.find(tid);
    return it == tgid_of_.end() ? tid : it->second;
  };
  report::print_stack_report(out, err, counts_, user_syms_.get(), p);
  if (lost_ > 0)
    err << "WARNING: " << lost_
        << " scheduler events lost (ring buffer overflow); the periods around them were not "
           "counted.\n";
  if (undecodable_ > 0) err << "WARNING: " << undecodable_ << " records could not be decoded.\n";
  cut_.warn(err);
}

}  // namespace tracekit::offcpu
