#include "perf/stack_sampler.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <ostream>

#include "perf/process_events.hpp"
#include "perf/syscall_regs.hpp"
#include "perf/user_unwind.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/tracing_frames.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/backlog.hpp"

namespace tracekit::perf {

size_t ring_pages(size_t cpus, uint64_t bytes_per_second) {
  constexpr size_t kMinPages = 256, kMaxPages = 2048, kAllPages = 8192;  // 1, 8, 32 MiB
  constexpr size_t kKnownRateMinPages = 128;                             // 512 KiB
  const size_t share = std::clamp<size_t>(std::bit_floor(kAllPages / std::max<size_t>(cpus, 1)),
                                          kMinPages, kMaxPages);
  if (bytes_per_second == 0) return share;
  const uint64_t second = std::bit_ceil((bytes_per_second + 4095) / 4096);
  return static_cast<size_t>(std::clamp<uint64_t>(second, kKnownRateMinPages, share));
}

uint64_t max_sample_bytes(const perf_event_attr& attr) {
  constexpr uint64_t kWords = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                              PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                              PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_IDENTIFIER;
  uint64_t n = sizeof(perf_event_header) + 8 * std::popcount(attr.sample_type & kWords);
  // nr, the frames, and a context marker per side.
  if (attr.sample_type & PERF_SAMPLE_CALLCHAIN) n += 8 * (1 + callchain_depth(attr) + 2);
  if (attr.sample_type & PERF_SAMPLE_REGS_USER)
    n += 8 * (1 + std::popcount(attr.sample_regs_user));
  if (attr.sample_type & PERF_SAMPLE_STACK_USER) n += 16 + attr.sample_stack_user;
  return n;
}

void wake_at_quarter(perf_event_attr& attr, size_t ring_pages) {
  attr.watermark = 1;
  attr.wakeup_watermark = static_cast<uint32_t>(ring_pages * 4096 / 4);
}

Status request_stacks(perf_event_attr& attr, bool kernel, bool user, const CallGraph& cg) {
  // dwarf: the kernel's callchain gives the kernel side only; the user side
  // is unwound from the sampled registers and stack.
  const bool dwarf = user && cg.dwarf();
  request_callchains(attr, kernel, user && !dwarf);
  if (dwarf) return request_user_stack(attr, cg);
  return {};
}

std::string lost_events_warning(uint64_t lost, std::string_view hint) {
  std::string s = "WARNING: " + std::to_string(lost) + " events lost: the kernel buffer was full";
  if (!hint.empty()) s += " (" + std::string(hint) + ")";
  return s + ".\n";
}

struct StackSampler::Parts {
  SamplerOptions o;
  std::optional<PerCpuEvents> own;  // open()'s events
  TaskNames names;
  symbols::UserSymbols user_syms;
  ProcessEvents process;  // refers to names and user_syms
  // Loading in the background from the start: the report shares the table
  // (KernelSymbols::load) rather than waiting 100-200 ms for /proc/kallsyms
  // after Ctrl-C.
  symbols::KernelSymbols ksyms;
  symbols::TracingFrames tracing{&ksyms};
  CutStacks cut;
  std::optional<UserUnwinder> unwinder;  // --call-graph dwarf
  ShortUserStacks short_user;            // fp: the hint
  Backlog early;                         // records held while ksyms loads
  Fd syscall_regs;                       // perf::full_syscall_regs, held for the run
  std::string syscall_regs_warning;      // ... or why not

  Parts(SamplerOptions opts, const perf_event_attr& attr)
      : o(std::move(opts)), process(names, user_syms, attr), cut(attr) {
    if (o.user && o.call_graph.dwarf()) unwinder.emplace(o.call_graph, attr, user_syms);
    if (o.kernel)
      if (auto k = symbols::KernelSymbols::load()) ksyms = std::move(*k);
    if (o.user && o.syscall_regs) {
      auto dir = tracefs::tracing_dir();
      auto regs = dir ? full_syscall_regs(*dir) : Result<Fd>(dir.error());
      if (regs)
        syscall_regs = std::move(*regs);
      else
        syscall_regs_warning = perf::syscall_regs_warning(regs.error());
    }
  }
};

namespace {

// The rings of o's events as attr has them, on cpus CPUs.
size_t pages_for(const perf_event_attr& attr, const SamplerOptions& o, size_t cpus) {
  return ring_pages(cpus, o.rate * max_sample_bytes(attr));
}

}  // namespace

Status StackSampler::prepare(perf_event_attr& attr, const SamplerOptions& o, size_t cpus) {
  if (auto st = request_stacks(attr, o.kernel, o.user, o.call_graph); !st) return st;
  // COMM, FORK, MMAP2: names, and mappings of processes that are gone by
  // the time their samples are read.
  request_process_events(attr);
  wake_at_quarter(attr, pages_for(attr, o, cpus));
  return {};
}

Result<StackSampler> StackSampler::open(const perf_event_attr& attr, const std::vector<int>& cpus,
                                        SamplerOptions o) {
  auto events = PerCpuEvents::open(attr, cpus, -1, pages_for(attr, o, cpus.size()));
  if (!events) return events.error();
  auto parts = std::make_unique<Parts>(std::move(o), attr);
  parts->own.emplace(std::move(*events));
  return StackSampler(std::move(parts), attr);
}

StackSampler::StackSampler(PerCpuEvents& events, const perf_event_attr& attr, SamplerOptions o)
    : StackSampler(std::make_unique<Parts>(std::move(o), attr), attr) {
  events_ = &events;
}

StackSampler::StackSampler(std::unique_ptr<Parts> parts, const perf_event_attr& attr)
    : p_(std::move(parts)), attr_(attr) {
  if (p_->own) events_ = &*p_->own;
  waiting_ = p_->o.kernel && p_->o.strip_tracing;
}

StackSampler::StackSampler(StackSampler&&) noexcept = default;
StackSampler& StackSampler::operator=(StackSampler&&) noexcept = default;
StackSampler::~StackSampler() = default;

TaskNames& StackSampler::names() { return p_->names; }
symbols::UserSymbols& StackSampler::user_symbols() { return p_->user_syms; }

Status StackSampler::enable(const std::vector<int>& pids, bool name_tasks) {
  if (auto st = events_->enable(); !st) return st;
  if (name_tasks && pids.empty()) p_->names.note_existing();
  for (int pid : pids) {
    if (name_tasks) p_->names.note_existing(static_cast<uint32_t>(pid));
    if (p_->o.user) p_->user_syms.note_process(pid);
  }
  return {};
}

bool StackSampler::side_band(const perf_event_header& h, std::span<const uint8_t> rec) {
  noted_pid_ = -1;  // an exec or a new process may have made user_syms forget it
  return p_->process.handle(h, rec);
}

bool StackSampler::decode(std::span<const uint8_t> rec, Sample& s) {
  if (decode_sample(attr_.sample_type, rec, s, attr_.sample_regs_user)) return true;
  ++undecodable_;
  return false;
}

bool StackSampler::symbols_loaded() const { return p_->ksyms.loaded(); }

bool StackSampler::hold(int cpu, std::span<const uint8_t> rec) {
  return !p_->ksyms.loaded() && p_->early.hold(static_cast<uint64_t>(cpu), rec);
}

void StackSampler::replay(const Each& each) {
  p_->early.replay([&](uint64_t cpu, std::span<const uint8_t> rec) {
    perf_event_header h;
    std::memcpy(&h, rec.data(), sizeof h);
    each(static_cast<int>(cpu), h, rec);
  });
  if (p_->ksyms.loaded()) waiting_ = false;
}

bool StackSampler::holding() const { return !p_->early.empty(); }

Chains StackSampler::chains(const Sample& s) {
  Chains c = split_callchain(s.callchain);
  p_->cut.note(c);
  if (p_->o.kernel && p_->o.strip_tracing) c.kernel = p_->tracing.strip(c.kernel);
  return c;
}

SampleStacks StackSampler::stacks(const Sample& s, const Chains& c) {
  SampleStacks st;
  if (p_->o.kernel) st.kernel = c.kernel;
  if (!p_->o.user) return st;
  std::span<const uint64_t> user = c.user;
  if (p_->unwinder)
    user = p_->unwinder->frames(s);
  else
    p_->short_user.note(s.pid, user, p_->user_syms);
  // Once per run of samples of one process: a hash lookup per sample was
  // 6% of stackcount's reader time at 400k events/s.
  if (!user.empty() && s.pid != 0 && static_cast<int64_t>(s.pid) != noted_pid_) {
    p_->user_syms.note_process(static_cast<pid_t>(s.pid));
    noted_pid_ = s.pid;
  }
  st.user = user;
  return st;
}

uint64_t StackSampler::lost() const { return events_->lost(lost_elsewhere_) - lost_reported_; }

uint64_t StackSampler::truncated() const {
  return p_->cut.count() + (p_->unwinder ? p_->unwinder->cut() : 0);
}

void StackSampler::warn_before(std::ostream& err) {
  err << p_->syscall_regs_warning;
  p_->syscall_regs_warning.clear();
}

void StackSampler::warn(std::ostream& err) {
  if (const uint64_t n = lost()) {
    err << lost_events_warning(n, p_->o.lost_hint);
    lost_reported_ += n;
  }
  p_->cut.warn(err);
  if (p_->unwinder) p_->unwinder->warn(err);
  if (undecodable_ > 0) {
    err << "WARNING: " << undecodable_ << " records could not be decoded.\n";
    undecodable_ = 0;
  }
  p_->short_user.hint(err);
}

}  // namespace tracekit::perf
