// How this works: four counters with one interface. The profiler sums
// trace_stat/function<CPU> and restarts the counts by turning
// function_profile_enabled off and on; the perf counters are read and the
// last reading subtracted; the function tracer's records are counted by
// address as they are read and the addresses named with kallsyms at each
// take; the events' records in the instance are counted by event id (a
// raw_syscalls stand-in's by its id field) as they are read. Each owns what it made (the top level's settings and lock, perf fds
// before the probes they count, the session) and undoes it when destroyed.
#include "session/counting.hpp"

#include <traceevent/event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <ostream>
#include <unordered_map>

#include "cli/signals.hpp"
#include "perf/counters.hpp"
#include "session/run.hpp"
#include "session/trace_session.hpp"
#include "symbols/kallsyms.hpp"
#include "syscalls/raw.hpp"
#include "syscalls/table.hpp"
#include "tracefs/instance.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::funccount {

namespace {

using Counts = std::map<std::string, uint64_t>;

// "syscalls:sys_enter_NAME" for syscall nr of a raw_syscalls stand-in.
std::string syscall_name(const session::TraceEvent& ev, int nr) {
  const bool exit = ev.event == syscalls::raw_event(true);
  return std::string(syscalls::kSystem) + ":" + syscalls::event_name(exit, nr);
}

// The function profiler at the top level, under the lock.
class ProfilerCounter : public Counter {
 public:
  static Result<std::unique_ptr<ProfilerCounter>> start(const std::vector<std::string>& functions,
                                                        const CounterOptions& o) {
    std::unique_ptr<ProfilerCounter> c(new ProfilerCounter);
    c->cpu_ = o.cpu;
    auto inst = tracefs::Instance::top_level(o.tracing_dir, o.lock_path);
    if (!inst) return inst.error();
    c->inst_.emplace(std::move(*inst));
    if (auto s = c->inst_->set_ftrace_filter(functions); !s) return s.error();
    if (auto s = c->inst_->set("function_profile_enabled", "1"); !s) return s.error();
    return c;
  }

  void poll(int timeout_ms) override { cli::sleep_unless_stopped(timeout_ms); }
  void stop() override {}
  Counts take(std::ostream&) override {
    Counts sum;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(inst_->path() + "/trace_stat", ec)) {
      const std::string name = f.path().filename().string();
      if (name.rfind("function", 0) != 0) continue;
      // -c: the profiler counts per CPU, in function<CPU>.
      if (cpu_ && name != "function" + std::to_string(*cpu_)) continue;
      auto text = read_file(f.path());
      if (!text) continue;
      for (auto& [name, hits] : parse_trace_stat(*text)) sum[name] += hits;
    }
    // The next counts from zero: enabling the profiler resets them.
    const std::string file = inst_->path() + "/function_profile_enabled";
    (void)tracefs::write_control(file, "0", false, {inst_->path()});
    (void)tracefs::write_control(file, "1", false, {inst_->path()});
    return sum;
  }

 private:
  ProfilerCounter() = default;
  std::optional<tracefs::Instance> inst_;
  std::optional<int> cpu_;
};

// perf counters on the session's events (kprobes, tracepoints, uprobes).
class EventCounter : public Counter {
 public:
  static Result<std::unique_ptr<EventCounter>> start(session::TraceSession trace,
                                                     const CounterOptions& o) {
    std::unique_ptr<EventCounter> c(new EventCounter);
    c->tool_ = o.tool;
    c->trace_.emplace(std::move(trace));
    std::vector<perf::Counted> counted;
    for (const auto& ev : c->trace_->probes().events()) {
      if (ev.syscalls.empty()) {
        counted.push_back({ev.id, ""});
        c->names_.push_back(ev.target);
        continue;
      }
      // raw_syscalls standing for syscalls:* events: one counter per
      // syscall, with its id filter.
      for (int nr : ev.syscalls) {
        counted.push_back({ev.id, syscalls::id_filter({nr})});
        c->names_.push_back(syscall_name(ev, nr));
      }
    }
    std::vector<int> tids;
    if (o.pid) {
      tids = threads_of(*o.pid);
      if (tids.empty())
        return no_process_error(*o.pid);
    }
    auto counters = perf::Counters::open(counted, tids, o.cpu.value_or(-1));
    if (!counters) return counters.error();
    c->counters_.emplace(std::move(*counters));
    if (auto s = c->counters_->enable(); !s) return s.error();
    return c;
  }

  // Counters first, then the probes they count (an event perf has open
  // cannot be removed). Releasing the counters is the slow part (removing
  // 802 uprobes after took 0.1 s): said when it is more than a moment.
  ~EventCounter() override {
    if (counters_ && trace_) session::say_detaching(tool_, trace_->probes().events().size());
    counters_.reset();
    trace_.reset();
  }

  void poll(int timeout_ms) override { cli::sleep_unless_stopped(timeout_ms); }
  void stop() override { final_ = counters_->take(); }
  Counts take(std::ostream& err) override {
    Result<std::vector<uint64_t>> counts = final_ ? std::move(*final_) : counters_->take();
    final_.reset();
    Counts sum;
    if (!counts) {
      err << tool_ << ": " << counts.error().str() << "\n";
      return sum;
    }
    for (size_t i = 0; i < counts->size(); ++i) sum[names_[i]] += (*counts)[i];
    return sum;
  }

 private:
  EventCounter() = default;
  std::string tool_;
  std::optional<session::TraceSession> trace_;
  std::optional<perf::Counters> counters_;
  std::vector<std::string> names_;  // per counter
  std::optional<Result<std::vector<uint64_t>>> final_;
};

// The run's instance read raw: the records are counted as they are read, by
// count(), and each take() names what was counted since the last. The
// reader's own records are left out (reading the rings makes system calls
// and calls vfs_read).
class InstanceCounter : public Counter {
 public:
  void poll(int timeout_ms) override {
    capture_->poll(timeout_ms, [&](const ftrace::Event& ev) {
      if (ev.pid != self_) count(ev);
    });
  }
  void stop() override { (void)capture_->instance().set_tracing_on(false); }
  Counts take(std::ostream& err) override {
    capture_->flush([&](const ftrace::Event& ev) {
      if (ev.pid != self_) count(ev);
    });
    Counts sum = named();
    const uint64_t lost = capture_->reader().dropped();
    session::report_lost(err, lost - lost_, false);
    lost_ = lost;
    return sum;
  }

 protected:
  // Starts reading the session's events (no stacks) into buffers of
  // buffer_kb per CPU (0: the kernel's default).
  // formats: the events' formats are loaded (for their fields); without,
  // records are counted by their common_type alone.
  Status read(session::TraceSession trace, const CounterOptions& o, size_t buffer_kb,
              std::ostream& warn, bool formats = true) {
    trace_.emplace(std::move(trace));
    session::CaptureOptions co;
    co.pid = o.pid;
    co.cpu = o.cpu;
    co.stacks = false;
    co.buffer_kb = buffer_kb;
    co.event_formats = formats;
    if (auto s = trace_->read_with_ftrace(co, warn); !s) return s.error();
    capture_ = trace_->ftrace();
    return {};
  }
  tep_handle* tep() { return capture_->reader().tep(); }
  virtual void count(const ftrace::Event& ev) = 0;
  // The counts since the last call, by name; counting starts again.
  virtual Counts named() = 0;

 private:
  std::optional<session::TraceSession> trace_;
  session::FtraceCapture* capture_ = nullptr;
  uint64_t lost_ = 0;
  const int self_ = static_cast<int>(::getpid());
};

// The function tracer in the session's instance, its records counted by
// function address.
class FunctionTracerCounter : public InstanceCounter {
 public:
  static Result<std::unique_ptr<FunctionTracerCounter>> start(session::TraceSession trace,
                                                              const CounterOptions& o,
                                                              std::ostream& warn) {
    std::unique_ptr<FunctionTracerCounter> c(new FunctionTracerCounter);
    auto k = symbols::KernelSymbols::load();
    if (!k) return k.error();
    c->ksyms_ = std::move(*k);
    if (auto s = c->read(std::move(trace), o, 0, warn); !s) return s.error();
    tep_event* fn = tep_find_event_by_name(c->tep(), "ftrace", "function");
    if (!fn) return Error{ENOENT, "no ftrace:function event format", {}, {}};
    c->function_id_ = fn->id;
    c->ip_ = tep_find_field(fn, "ip");
    if (!c->ip_) return Error{ENOENT, "no ip field in ftrace:function", {}, {}};
    return c;
  }

 private:
  FunctionTracerCounter() = default;
  void count(const ftrace::Event& ev) override {
    if (ev.type != function_id_) return;
    unsigned long long ip = 0;
    if (tep_read_number_field(const_cast<tep_format_field*>(ip_), ev.data.data(), &ip) == 0)
      ++by_ip_[ip];
  }
  Counts named() override {
    Counts sum;
    for (const auto& [ip, n] : by_ip_) {
      auto r = ksyms_.lookup(ip);
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ip));
      sum[r ? std::string(r->name) : std::string(hex)] += n;
    }
    by_ip_.clear();
    return sum;
  }
  symbols::KernelSymbols ksyms_;
  int function_id_ = -1;
  const tep_format_field* ip_ = nullptr;
  std::unordered_map<uint64_t, uint64_t> by_ip_;
};

// The session's tracepoints enabled in its instance, their records counted
// by event id (raw_syscalls stand-ins by their id field, the syscall).
class EventTracerCounter : public InstanceCounter {
 public:
  static Result<std::unique_ptr<EventTracerCounter>> start(session::TraceSession trace,
                                                           const CounterOptions& o,
                                                           std::ostream& warn) {
    std::unique_ptr<EventTracerCounter> c(new EventTracerCounter);
    // Before the session is moved into the reader: its events.
    std::vector<session::TraceEvent> events = trace.probes().events();
    // Only raw_syscalls stand-ins are read by a field (their id): 360
    // syscall formats took a quarter of the start-up otherwise.
    const bool stand_ins = std::any_of(events.begin(), events.end(),
                                       [](const auto& ev) { return !ev.syscalls.empty(); });
    if (auto s = c->read(std::move(trace), o, kEventTracerBufferKb, warn, stand_ins); !s)
      return s.error();
    for (const auto& ev : events) {
      Slot& slot = c->slots_[ev.id];
      if (ev.syscalls.empty()) {
        slot.index = c->add(ev.target);
        continue;
      }
      tep_event* raw = tep_find_event(c->tep(), ev.id);
      slot.nr = raw ? tep_find_field(raw, "id") : nullptr;
      if (!slot.nr) return Error{ENOENT, "no id field in " + ev.system + ":" + ev.event, {}, {}};
      for (int nr : ev.syscalls) slot.syscalls[nr] = c->add(syscall_name(ev, nr));
    }
    return c;
  }

 private:
  struct Slot {
    size_t index = 0;                              // the event's count
    const tep_format_field* nr = nullptr;          // a stand-in's syscall number field
    std::unordered_map<long, size_t> syscalls;     // a stand-in's counts, by syscall
  };
  EventTracerCounter() = default;
  size_t add(std::string name) {
    names_.push_back(std::move(name));
    counts_.push_back(0);
    return names_.size() - 1;
  }
  void count(const ftrace::Event& ev) override {
    auto it = slots_.find(ev.type);
    if (it == slots_.end()) return;
    const Slot& slot = it->second;
    if (!slot.nr) {
      ++counts_[slot.index];
      return;
    }
    unsigned long long nr = 0;
    if (tep_read_number_field(const_cast<tep_format_field*>(slot.nr), ev.data.data(), &nr) != 0)
      return;
    if (auto s = slot.syscalls.find(static_cast<long>(nr)); s != slot.syscalls.end())
      ++counts_[s->second];
  }
  Counts named() override {
    Counts sum;
    for (size_t i = 0; i < names_.size(); ++i) sum[names_[i]] += counts_[i];
    std::fill(counts_.begin(), counts_.end(), 0);
    return sum;
  }
  std::unordered_map<int, Slot> slots_;  // by event id
  std::vector<std::string> names_;
  std::vector<uint64_t> counts_;  // per name
};

}  // namespace

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::kProfiler:
      return "the function profiler";
    case Backend::kKprobeCounters:
      return "perf counters on kprobes";
    case Backend::kFunctionTracer:
      return "the function tracer, counted by address";
    case Backend::kEventCounters:
      return "perf counters on the events";
    case Backend::kEventTracer:
      return "the events in the run's instance, counted by id";
  }
  return "";
}

std::vector<Backend> kernel_function_backends(bool profiler, bool kprobes, bool function_tracer,
                                              bool pid) {
  std::vector<Backend> ways;
  if (profiler && !pid) ways.push_back(Backend::kProfiler);
  if (kprobes) ways.push_back(Backend::kKprobeCounters);
  if (function_tracer) ways.push_back(Backend::kFunctionTracer);
  return ways;
}

Backend tracepoint_backend(const std::vector<probe::Target>& targets, bool instances) {
  return instances && targets.size() > kMaxCountedTracepoints ? Backend::kEventTracer
                                                              : Backend::kEventCounters;
}

std::vector<Backend> host_kernel_function_backends(kernel::Features& f, bool pid) {
  using kernel::Feature;
  return kernel_function_backends(f.has(Feature::kFunctionProfiler), f.has(Feature::kKprobes),
                                  f.has(Feature::kFunctionTracer), pid);
}

Error no_kernel_function_backend(kernel::Features& f, bool pid) {
  using kernel::Feature;
  auto why = [&](Feature x) {
    return f.state(x) == kernel::State::kForcedOff
               ? std::string(kernel::info(x).name) + " turned off by TRACEKIT_KERNEL_FEATURES"
               : "no " + std::string(kernel::info(x).name);
  };
  std::string message = "cannot count kernel functions here: " + why(Feature::kKprobes) + ", " +
                        why(Feature::kFunctionTracer) + ", ";
  if (pid && f.has(Feature::kFunctionProfiler))
    message += "and the function profiler counts every process (no -p)";
  else
    message += why(Feature::kFunctionProfiler);
  return Error{0,
               message,
               {},
               "CONFIG_KPROBE_EVENTS, or CONFIG_FUNCTION_TRACER without kernel lockdown, or "
               "CONFIG_FUNCTION_PROFILER brings one"};
}

std::vector<std::pair<std::string, uint64_t>> parse_trace_stat(std::string_view text) {
  std::vector<std::pair<std::string, uint64_t>> rows;
  for (auto line : split(text, '\n')) {
    std::vector<std::string_view> f;
    for (auto w : split(trim(line), ' '))
      if (!w.empty()) f.push_back(w);
    if (f.size() < 2) continue;
    auto hits = parse_int<uint64_t>(f[1]);
    if (!hits) continue;
    rows.emplace_back(std::string(f[0]), *hits);
  }
  return rows;
}

// The counters of a trace session: the session made for targets, then
// start(session) as the counter's own start takes it.
template <typename Start>
Result<std::unique_ptr<Counter>> counter_on_session(const std::vector<probe::Target>& targets,
                                                    const CounterOptions& o, bool function_tracer,
                                                    std::ostream& warn, Start start) {
  auto trace = session::TraceSession::create(o.tracing_dir, o.tool, targets, function_tracer, warn);
  if (!trace) return trace.error();
  auto c = start(std::move(*trace));
  if (!c) return c.error();
  return std::unique_ptr<Counter>(std::move(*c));
}

Result<std::unique_ptr<Counter>> start_counter(Backend b, const std::vector<probe::Target>& targets,
                                               const CounterOptions& o, std::ostream& warn) {
  switch (b) {
    case Backend::kProfiler: {
      std::vector<std::string> names;
      for (const auto& t : targets) names.push_back(t.function);
      auto c = ProfilerCounter::start(names, o);
      if (!c) return c.error();
      return std::unique_ptr<Counter>(std::move(*c));
    }
    case Backend::kKprobeCounters:
    case Backend::kEventCounters:
      return counter_on_session(targets, o, false, warn, [&](session::TraceSession t) {
        return EventCounter::start(std::move(t), o);
      });
    case Backend::kFunctionTracer:
      return counter_on_session(targets, o, true, warn, [&](session::TraceSession t) {
        return FunctionTracerCounter::start(std::move(t), o, warn);
      });
    case Backend::kEventTracer:
      return counter_on_session(targets, o, false, warn, [&](session::TraceSession t) {
        return EventTracerCounter::start(std::move(t), o, warn);
      });
  }
  return Error{EINVAL, "no such way of counting", {}, {}};
}

}  // namespace tracekit::funccount
