#include "profile/profiler.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "aggregate/stack_counts.hpp"
#include "perf/event.hpp"
#include "perf/stack_sampler.hpp"
#include "output/print_report.hpp"
#include "report/stack_records.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::profile {

namespace {

constexpr uint64_t kSampleType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                 PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
// Records read from each ring per poll(): at the highest rates the rings
// fill faster than they are read, and a poll that emptied them all would let
// a stop request wait behind a great deal of work; what is left is read by
// the next poll (whose wait returns at once while a ring is past its
// watermark). Well under a millisecond of work.
constexpr size_t kRecordsPerPoll = 256;

// Records other than samples and the process records: none to read.
void ignore_record(int, const perf_event_header&, std::span<const uint8_t>) {}

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

std::string lost_hint(const Options& o) { return o.count ? "try a higher -c" : "try a lower -F"; }

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
  perf::StackSampler sampler;
  aggregate::StackCounts counts;
  uint64_t samples = 0;
  int64_t started_ns = report::unix_now_ns();  // for the -o files' times

  Impl(const Options& opts, perf::StackSampler s, std::function<bool()> stop)
      : o(opts),
        stop_requested(std::move(stop)),
        sampler(std::move(s)),
        counts(opts.stack_storage, opts.hash_storage) {}

  bool wanted(uint32_t pid, uint32_t tid) const {
    if (tid == 0 && !o.include_idle) return false;
    auto has = [](const std::vector<int>& v, uint32_t id) {
      return std::find(v.begin(), v.end(), static_cast<int>(id)) != v.end();
    };
    if (!o.pids.empty() && !has(o.pids, pid)) return false;
    if (!o.tids.empty() && !has(o.tids, tid)) return false;
    return true;
  }

  void sampled(int /*cpu*/, const perf::Sample& s) {
    if (!wanted(s.pid, s.tid)) return;
    ++samples;
    auto st = sampler.stacks(s);
    counts.add(s.pid, sampler.names().comm(s.pid, s.tid, s.cpu), st.kernel, st.user, 1);
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
  perf::SamplerOptions so;
  so.kernel = !o.user_only;
  so.user = !o.kernel_only;
  so.call_graph = o.call_graph;
  so.lost_hint = lost_hint(o);
  // cpu-clock counts nanoseconds: -c COUNT is 1e9 / COUNT samples a second.
  so.rate = o.count ? std::max<uint64_t>(1000000000ull / *o.count, 1)
                    : static_cast<uint64_t>(o.frequency);
  if (auto st = perf::StackSampler::prepare(attr, so, cpus.size()); !st) return st.error();
  auto sampler = perf::StackSampler::open(attr, cpus, std::move(so));
  if (!sampler) return sampler.error();
  auto impl = std::make_unique<Impl>(o, std::move(*sampler), std::move(stop));
  if (auto st = impl->sampler.enable(o.pids, true); !st) return st.error();
  return Profiler(std::move(impl));
}

uint64_t Profiler::samples() const { return impl_->samples; }

void Profiler::poll(int timeout_ms) {
  Impl& m = *impl_;
  m.sampler.events().wait(timeout_ms);
  m.sampler.drain([&](int cpu, const perf::Sample& s) { m.sampled(cpu, s); }, ignore_record,
                  kRecordsPerPoll, [&] { return m.stop_requested && m.stop_requested(); });
}

void Profiler::stop() {
  Impl& m = *impl_;
  (void)m.sampler.events().disable();
  m.sampler.finish([&](int cpu, const perf::Sample& s) { m.sampled(cpu, s); }, ignore_record);
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
  p.totals.lost_events = m.sampler.lost();
  p.totals.truncated_stacks = m.sampler.truncated();
  m.sampler.warn_before(err);
  report::Report r = report::build_report(m.counts, &m.sampler.user_symbols(), p, err);
  report::trim_past_stack_roots(r.records, r.frames);
  // Names of threads whose samples came before the records naming them.
  for (auto& rec : r.records) rec.comm = m.sampler.names().settle(rec.comm);
  output::print_report(out, err, r, p);
  m.sampler.warn(err);
}

}  // namespace tracekit::profile
