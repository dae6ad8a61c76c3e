#include "funccount/funccount.hpp"

#include <traceevent/event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "kernel/features.hpp"
#include "perf/counters.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "session/trace_session.hpp"
#include "symbols/kallsyms.hpp"
#include "syscalls/raw.hpp"
#include "syscalls/table.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::funccount {

namespace {

using Counts = std::vector<std::pair<std::string, uint64_t>>;

void print_table(std::ostream& out, const Counts& counts, std::optional<size_t> top) {
  out << format_table(counts, top);
}

// The function profiler at the top level, under the lock.
class ProfilerEngine : public session::Engine {
 public:
  static Result<std::unique_ptr<ProfilerEngine>> start(const std::string& dir,
                                                       const std::vector<std::string>& functions,
                                                       std::optional<size_t> top,
                                                       const std::string& lock_path) {
    std::unique_ptr<ProfilerEngine> e(new ProfilerEngine);
    e->top_ = top;
    auto inst = tracefs::Instance::top_level(dir, lock_path);
    if (!inst) return inst.error();
    e->inst_.emplace(std::move(*inst));
    if (auto s = e->inst_->set_ftrace_filter(functions); !s) return s.error();
    if (auto s = e->inst_->set("function_profile_enabled", "1"); !s) return s.error();
    return e;
  }

  void poll(int timeout_ms) override { cli::sleep_unless_stopped(timeout_ms); }
  void stop() override {}
  void report(std::ostream& out, std::ostream&) override {
    std::map<std::string, uint64_t> sum;
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(inst_->path() + "/trace_stat", ec)) {
      if (f.path().filename().string().rfind("function", 0) != 0) continue;
      auto text = read_file(f.path());
      if (!text) continue;
      for (auto& [name, hits] : parse_trace_stat(*text)) sum[name] += hits;
    }
    print_table(out, Counts(sum.begin(), sum.end()), top_);
    // The next interval's counts from zero: enabling the profiler resets them.
    const std::string file = inst_->path() + "/function_profile_enabled";
    (void)tracefs::write_control(file, "0", false, {inst_->path()});
    (void)tracefs::write_control(file, "1", false, {inst_->path()});
  }

 private:
  ProfilerEngine() = default;
  std::optional<size_t> top_;
  std::optional<tracefs::Instance> inst_;
};

// perf counters on the session's events (kprobes, tracepoints, uprobes).
class CounterEngine : public session::Engine {
 public:
  static Result<std::unique_ptr<CounterEngine>> start(session::TraceSession trace,
                                                      std::optional<int> pid,
                                                      std::optional<size_t> top) {
    std::unique_ptr<CounterEngine> e(new CounterEngine);
    e->top_ = top;
    e->trace_.emplace(std::move(trace));
    std::vector<perf::Counted> counted;
    for (const auto& ev : e->trace_->probes().events()) {
      if (ev.syscalls.empty()) {
        counted.push_back({ev.id, ""});
        e->names_.push_back(ev.target);
        continue;
      }
      // raw_syscalls standing for syscalls:* events: one counter per
      // syscall, with its id filter.
      const bool exit = ev.event == syscalls::raw_event(true);
      for (int nr : ev.syscalls) {
        counted.push_back({ev.id, syscalls::id_filter({nr})});
        e->names_.push_back(std::string(syscalls::kSystem) + ":" + syscalls::event_name(exit, nr));
      }
    }
    std::vector<int> tids;
    if (pid) {
      tids = threads_of(*pid);
      if (tids.empty()) return Error{ESRCH, "no process with PID " + std::to_string(*pid), {}, {}};
    }
    auto c = perf::Counters::open(counted, tids);
    if (!c) return c.error();
    e->counters_.emplace(std::move(*c));
    if (auto s = e->counters_->enable(); !s) return s.error();
    return e;
  }

  // Counters first, then the probes they count (an event perf has open
  // cannot be removed).
  ~CounterEngine() override {
    counters_.reset();
    trace_.reset();
  }

  void poll(int timeout_ms) override { cli::sleep_unless_stopped(timeout_ms); }
  void stop() override { final_ = counters_->take(); }
  void report(std::ostream& out, std::ostream& err) override {
    Result<std::vector<uint64_t>> counts = final_ ? std::move(*final_) : counters_->take();
    final_.reset();
    if (!counts) {
      err << "funccount: " << counts.error().str() << "\n";
      return;
    }
    std::map<std::string, uint64_t> sum;
    for (size_t i = 0; i < counts->size(); ++i) sum[names_[i]] += (*counts)[i];
    print_table(out, Counts(sum.begin(), sum.end()), top_);
  }

 private:
  CounterEngine() = default;
  std::optional<size_t> top_;
  std::optional<session::TraceSession> trace_;
  std::optional<perf::Counters> counters_;
  std::vector<std::string> names_;  // per counter
  std::optional<Result<std::vector<uint64_t>>> final_;
};

// The function tracer in the session's instance, its records counted by
// function address.
class FunctionTracerEngine : public session::Engine {
 public:
  static Result<std::unique_ptr<FunctionTracerEngine>> start(session::TraceSession trace,
                                                             std::optional<int> pid,
                                                             std::optional<size_t> top,
                                                             std::ostream& warn) {
    std::unique_ptr<FunctionTracerEngine> e(new FunctionTracerEngine);
    e->top_ = top;
    auto k = symbols::KernelSymbols::load();
    if (!k) return k.error();
    e->ksyms_ = std::move(*k);
    e->trace_.emplace(std::move(trace));
    session::CaptureOptions co;
    co.pid = pid;
    co.stacks = false;
    if (auto s = e->trace_->read_with_ftrace(co, warn); !s) return s.error();
    e->capture_ = e->trace_->ftrace();
    tep_handle* tep = e->capture_->reader().tep();
    tep_event* fn = tep_find_event_by_name(tep, "ftrace", "function");
    if (!fn) return Error{ENOENT, "no ftrace:function event format", {}, {}};
    e->function_id_ = fn->id;
    e->ip_ = tep_find_field(fn, "ip");
    if (!e->ip_) return Error{ENOENT, "no ip field in ftrace:function", {}, {}};
    return e;
  }

  void poll(int timeout_ms) override {
    capture_->poll(timeout_ms, [&](const ftrace::Event& ev) { count(ev); });
  }
  void stop() override { (void)capture_->instance().set_tracing_on(false); }
  void report(std::ostream& out, std::ostream& err) override {
    capture_->flush([&](const ftrace::Event& ev) { count(ev); });
    std::map<std::string, uint64_t> sum;
    for (const auto& [ip, n] : by_ip_) {
      auto r = ksyms_.lookup(ip);
      char hex[32];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(ip));
      sum[r ? std::string(r->name) : std::string(hex)] += n;
    }
    by_ip_.clear();
    print_table(out, Counts(sum.begin(), sum.end()), top_);
    const uint64_t lost = capture_->reader().dropped();
    session::report_lost(err, lost - lost_, false);
    lost_ = lost;
  }

 private:
  FunctionTracerEngine() = default;
  void count(const ftrace::Event& ev) {
    // Not our own calls: reading the ring buffers calls vfs_read too.
    if (ev.type != function_id_ || ev.pid == self_) return;
    unsigned long long ip = 0;
    if (tep_read_number_field(const_cast<tep_format_field*>(ip_), ev.data.data(), &ip) == 0)
      ++by_ip_[ip];
  }
  std::optional<size_t> top_;
  symbols::KernelSymbols ksyms_;
  std::optional<session::TraceSession> trace_;
  session::FtraceCapture* capture_ = nullptr;
  int function_id_ = -1;
  const tep_format_field* ip_ = nullptr;
  std::unordered_map<uint64_t, uint64_t> by_ip_;
  uint64_t lost_ = 0;
  const int self_ = static_cast<int>(::getpid());
};

int fail(const Error& e) {
  if (e.err == EINTR && cli::stop_requested()) return cli::kExitOk;
  if (e.kind == ErrorKind::kNoMatch) {
    std::cout << e.message << "\n";
    return cli::kExitFailure;
  }
  std::cerr << "funccount: " << e.str() << "\n";
  return cli::kExitFailure;
}

// Why no way of counting kernel functions works here.
Error no_way(kernel::Features& f, bool pid) {
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
  return Error{0, message, {},
               "CONFIG_KPROBE_EVENTS, or CONFIG_FUNCTION_TRACER without kernel lockdown, or "
               "CONFIG_FUNCTION_PROFILER brings one"};
}

}  // namespace

Result<std::unique_ptr<session::Engine>> start_profiler(const std::string& tracing_dir,
                                                        const std::vector<std::string>& functions,
                                                        std::optional<size_t> top,
                                                        const std::string& lock_path) {
  auto e = ProfilerEngine::start(tracing_dir, functions, top, lock_path);
  if (!e) return e.error();
  return std::unique_ptr<session::Engine>(std::move(*e));
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::kProfiler: return "the function profiler";
    case Backend::kKprobeCounters: return "perf counters on kprobes";
    case Backend::kFunctionTracer: return "the function tracer, counted by address";
    case Backend::kEventCounters: return "perf counters on the events";
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

std::string format_table(std::vector<std::pair<std::string, uint64_t>> counts,
                         std::optional<size_t> top) {
  std::erase_if(counts, [](const auto& c) { return c.second == 0; });
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  if (top && counts.size() > *top) counts.erase(counts.begin(), counts.end() - *top);
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-30s %8s\n", "FUNC", "COUNT");
  out += line;
  for (const auto& [name, n] : counts) {
    std::snprintf(line, sizeof line, "%-30s %8llu\n", name.c_str(),
                  static_cast<unsigned long long>(n));
    out += line;
  }
  return out;
}

std::string header_line(const Options& o) {
  std::string h = "Tracing \"" + o.pattern + "\"";
  const std::string top = o.top ? ". Top " + std::to_string(*o.top) + " only" : "";
  std::ostringstream secs;
  if (o.duration) secs << *o.duration;
  if (o.duration)
    h += " for " + secs.str() + " seconds" + top + "...\n";
  else
    h += top + "... Ctrl-C to end.\n";
  return h;
}

int run(const Options& o) {
  cli::install_stop_handlers();
  if (o.pid && !process_exists(*o.pid))
    return fail(Error{ESRCH, "no process with PID " + std::to_string(*o.pid), {}, "check the PID with ps"});
  auto dir = tracefs::tracing_dir();
  if (!dir) return fail(dir.error());
  auto spec = probe::parse_spec(o.pattern);
  if (!spec) return fail(spec.error());
  switch (spec->kind) {
    case probe::Kind::kKernel:
    case probe::Kind::kTracepoint:
    case probe::Kind::kUser: break;
    default:
      return fail(Error{EINVAL, "funccount counts function entries and tracepoints: \"" +
                                    o.pattern + "\" is neither",
                        {}, "kernel functions as func or p::func, t:cat:event, lib:func"});
  }
  auto& features = kernel::Features::host();
  std::vector<Backend> ways{Backend::kEventCounters};
  if (spec->kind == probe::Kind::kKernel) {
    ways = kernel_function_backends(features.has(kernel::Feature::kFunctionProfiler),
                                    features.has(kernel::Feature::kKprobes),
                                    features.has(kernel::Feature::kFunctionTracer),
                                    o.pid.has_value());
    if (ways.empty()) return fail(no_way(features, o.pid.has_value()));
  } else if (!features.has(kernel::Feature::kPerfEvents)) {
    return fail(features.missing(kernel::Feature::kPerfEvents));
  }

  probe::ExpandOptions eo;
  eo.regex = o.regex;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) return fail(targets.error());
  if (targets->empty())
    return fail(Error{0, "0 functions matched by \"" + o.pattern + "\". Exiting.", {}, {},
                      ErrorKind::kNoMatch});

  std::unique_ptr<session::Engine> engine;
  switch (ways.front()) {
    case Backend::kProfiler: {
      cli::sweep_leftovers(cli::Sweep::kMount);
      std::vector<std::string> names;
      for (const auto& t : *targets) names.push_back(t.function);
      auto e = start_profiler(*dir, names, o.top);
      if (!e) return fail(e.error());
      engine = std::move(*e);
      break;
    }
    case Backend::kKprobeCounters:
    case Backend::kEventCounters: {
      auto trace = session::TraceSession::create(*dir, "funccount", *targets,
                                                 /*function_tracer=*/false, std::cerr);
      if (!trace) return fail(trace.error());
      auto e = CounterEngine::start(std::move(*trace), o.pid, o.top);
      if (!e) return fail(e.error());
      engine = std::move(*e);
      break;
    }
    case Backend::kFunctionTracer: {
      auto trace = session::TraceSession::create(*dir, "funccount", *targets,
                                                 /*function_tracer=*/true, std::cerr);
      if (!trace) return fail(trace.error());
      auto e = FunctionTracerEngine::start(std::move(*trace), o.pid, o.top, std::cerr);
      if (!e) return fail(e.error());
      engine = std::move(*e);
      break;
    }
  }

  session::RunOptions r;
  r.header = header_line(o);
  r.duration = o.duration;
  r.interval = o.interval;
  r.timestamp = o.timestamp;
  r.before_report = "\n";
  r.after_report = "\nEnding tracing...\n";
  return session::run(*engine, r);
}

}  // namespace tracekit::funccount
