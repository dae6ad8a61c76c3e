// How each feature is probed: tracefs features by the files the kernel
// shows (a trigger file lists the trigger commands the kernel knows; the
// tracefs README lists the fetch-arg syntax); the function tracer by whether
// available_filter_functions can be read (kernel lockdown refuses it, while
// available_tracers still lists "function"); eprobes by creating one (a
// kernel without CONFIG_EPROBE_EVENTS still lists "e:" in its README); perf
// attr bits by opening a software event on the calling thread with one bit
// set at a time (a kernel refuses bits it does not know with EINVAL).
#include "kernel/features.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>

#include "tracefs/instance.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace tracekit::kernel {

namespace {

using F = Feature;

constexpr FeatureInfo kTable[] = {
    {F::kTracefs, "tracefs", "the tracefs filesystem", "Linux 4.1",
     "debugfs's tracing directory"},
    {F::kDebugfsTracing, "debugfs_tracing", "ftrace under debugfs (/sys/kernel/debug/tracing)",
     "CONFIG_FTRACE, CONFIG_DEBUG_FS", ""},
    {F::kInstances, "instances", "tracefs instances (private trace buffers)", "Linux 3.10",
     "the top level, under perf-tools' lock"},
    {F::kEventTriggers, "event_triggers", "event triggers", "Linux 3.14",
     "the stacktrace option"},
    {F::kStacktraceTrigger, "stacktrace_trigger", "the stacktrace event trigger", "Linux 3.14",
     "the stacktrace option"},
    {F::kHistTriggers, "hist_triggers", "hist triggers", "CONFIG_HIST_TRIGGERS (Linux 4.7)",
     "aggregation in user space"},
    {F::kKprobes, "kprobes", "kprobe events (kprobe_events)", "CONFIG_KPROBE_EVENTS",
     "the function tracer for kernel functions"},
    {F::kUprobes, "uprobes", "uprobe events (uprobe_events)", "CONFIG_UPROBE_EVENTS (Linux 3.5)",
     ""},
    {F::kDynamicEvents, "dynamic_events", "the dynamic_events file", "Linux 5.0",
     "kprobe_events and uprobe_events"},
    {F::kEprobes, "eprobes", "event probes (e: in dynamic_events)",
     "CONFIG_EPROBE_EVENTS (Linux 5.15)", "kprobes; uprobes on the C library's wrappers"},
    {F::kErrorLog, "error_log", "the tracing error_log", "Linux 5.2",
     "errors without the kernel's explanation"},
    {F::kBufferPercent, "buffer_percent", "buffer_percent (wake readers when a share is full)",
     "Linux 5.0", "timed polling"},
    {F::kSetEventPid, "set_event_pid", "event pid lists (set_event_pid)", "Linux 4.4",
     "common_pid filters"},
    {F::kEventFork, "event_fork", "following forks in pid lists (options/event-fork)",
     "Linux 4.7", "the threads there are at the start"},
    {F::kFunctionTracer, "function_tracer", "the function tracer",
     "CONFIG_FUNCTION_TRACER, and no kernel lockdown", "kprobes"},
    {F::kFunctionGraph, "function_graph", "the function_graph tracer",
     "CONFIG_FUNCTION_GRAPH_TRACER, and no kernel lockdown", ""},
    {F::kFunctionProfiler, "function_profiler", "the function profiler",
     "CONFIG_FUNCTION_PROFILER", "counting with kprobes or the function tracer"},
    {F::kSyscallTracepoints, "syscall_tracepoints", "syscalls:* tracepoints",
     "CONFIG_FTRACE_SYSCALLS", "raw_syscalls with an id filter"},
    {F::kKprobeArgN, "kprobe_argn", "the $argN fetch argument", "Linux 4.20",
     "registers by the calling convention"},
    {F::kUstring, "ustring", "the ustring fetch type (user-space strings)", "Linux 5.3",
     "string"},
    {F::kPerfEvents, "perf_events", "perf_event_open (software events)", "CONFIG_PERF_EVENTS",
     ""},
    {F::kContextSwitch, "context_switch", "perf context-switch records (PERF_RECORD_SWITCH)",
     "Linux 4.3", "switch-ins from sched_switch's next_pid"},
    {F::kUseClockid, "use_clockid", "perf sample clock choice (use_clockid)", "Linux 4.1",
     "perf's own clock"},
    {F::kMmap2, "mmap2", "perf PERF_RECORD_MMAP2 records", "Linux 3.12", "PERF_RECORD_MMAP"},
    {F::kCommExec, "comm_exec", "perf exec flag on COMM records (comm_exec)", "Linux 3.16",
     "COMM records without the exec flag"},
    {F::kSampleMaxStack, "sample_max_stack", "perf per-event stack depth (sample_max_stack)",
     "Linux 4.8", "the default depth (127)"},
    {F::kExcludeCallchain, "exclude_callchain", "perf exclude_callchain_kernel/user", "Linux 3.7",
     "both sides recorded, one dropped"},
    {F::kPerfEventMaxStack, "perf_event_max_stack", "kernel.perf_event_max_stack", "Linux 4.8",
     "the default depth (127)"},
};
static_assert(std::size(kTable) == static_cast<size_t>(F::kCount));

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

// Whether the file holds word, between blanks (spaces, tabs, newlines).
bool file_has_word(const std::string& path, std::string_view word) {
  auto text = read_file(path);
  if (!text) return false;
  std::string_view t = *text;
  for (size_t at = t.find(word); at != std::string_view::npos; at = t.find(word, at + 1)) {
    auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\n'; };
    bool before = at == 0 || blank(t[at - 1]);
    bool after = at + word.size() == t.size() || blank(t[at + word.size()]);
    if (before && after) return true;
  }
  return false;
}

bool file_contains(const std::string& path, std::string_view needle) {
  auto text = read_file(path);
  return text && text->find(needle) != std::string::npos;
}

// Opens a software event on the calling thread, disabled, with f's attr
// change (none for kPerfEvents). Returns 0 or errno.
int open_with(F f) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_CPU_CLOCK;
  a.disabled = 1;
  a.exclude_hv = 1;
  a.exclude_kernel = 1;  // allowed to more users than kernel counting
  a.sample_period = 1000000;
  switch (f) {
    case F::kPerfEvents: break;
    case F::kContextSwitch: a.context_switch = 1; break;
    case F::kUseClockid:
      a.use_clockid = 1;
      a.clockid = CLOCK_MONOTONIC;
      break;
    case F::kMmap2: a.mmap2 = 1; break;
    case F::kCommExec:
      a.comm = 1;
      a.comm_exec = 1;
      break;
    case F::kSampleMaxStack:
      a.sample_type = PERF_SAMPLE_CALLCHAIN;
      a.sample_max_stack = 8;
      break;
    case F::kExcludeCallchain:
      a.sample_type = PERF_SAMPLE_CALLCHAIN;
      a.exclude_callchain_kernel = 1;
      break;
    default: return EINVAL;
  }
  Fd fd(static_cast<int>(syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC)));
  return fd.valid() ? 0 : errno;
}

bool host_perf_accepts(F f) {
  if (f == F::kPerfEventMaxStack) return exists("/proc/sys/kernel/perf_event_max_stack");
  // Without permission to open even the plain event (not root, a high
  // perf_event_paranoid) nothing can be told apart: count the bits as there
  // (the tools' own opens then fail with the permission error, which is the
  // real problem); without perf at all (ENOSYS, ENOENT), none is.
  static const int base = open_with(F::kPerfEvents);
  if (base == EACCES || base == EPERM) return true;
  if (base != 0) return false;
  return f == F::kPerfEvents || open_with(f) == 0;
}

bool host_eprobe_works(const std::string& dir) {
  const std::string group = "tracekit_" + std::to_string(getpid());
  const std::string events = dir + "/dynamic_events";
  if (!tracefs::write_control(events, "e:" + group + "/tk_eprobe_check sched/sched_switch", true,
                              {dir}))
    return false;
  (void)tracefs::write_control(events, "-:" + group + "/tk_eprobe_check", true, {dir});
  return true;
}

bool host_function_tracer_works(const std::string& dir) {
  if (!file_has_word(dir + "/available_tracers", "function")) return false;
  // Kernel lockdown: readable by name, refused at read.
  Fd fd(::open((dir + "/available_filter_functions").c_str(), O_RDONLY | O_CLOEXEC));
  char c;
  return fd.valid() && ::read(fd.get(), &c, 1) == 1;
}

}  // namespace

std::span<const FeatureInfo> feature_table() { return kTable; }

const FeatureInfo& info(Feature f) { return kTable[static_cast<size_t>(f)]; }

std::optional<Feature> feature_named(std::string_view name) {
  for (const auto& i : kTable)
    if (i.name == name) return i.id;
  return std::nullopt;
}

Result<std::vector<Feature>> parse_forced(std::string_view spec) {
  std::vector<Feature> off;
  for (auto item : split(spec, ',')) {
    item = trim(item);
    if (item.empty()) continue;
    if (item[0] != '-')
      return Error{0, "TRACEKIT_KERNEL_FEATURES: \"" + std::string(item) +
                               "\" does not turn a feature off (write -NAME)",
                   {}, "the names are those of tracekit features"};
    auto f = feature_named(item.substr(1));
    if (!f)
      return Error{0, "TRACEKIT_KERNEL_FEATURES: no feature named \"" +
                               std::string(item.substr(1)) + "\"",
                   {}, "the names are those of tracekit features"};
    off.push_back(*f);
  }
  return off;
}

Probe host_probe() {
  Probe p;
  p.tracing_dir = [] {
    auto d = tracefs::tracing_dir();
    return d ? *d : std::string();
  };
  p.tracefs_filesystem = [] { return file_has_word("/proc/filesystems", "tracefs"); };
  // A kernel with tracefs shows it under debugfs too (automounted); before
  // tracefs (4.1), tracing/ is there once debugfs is mounted.
  p.debugfs_tracing = [] {
    return file_has_word("/proc/filesystems", "debugfs") &&
           (file_has_word("/proc/filesystems", "tracefs") || exists("/sys/kernel/debug/tracing"));
  };
  p.perf_accepts = host_perf_accepts;
  p.eprobe_works = host_eprobe_works;
  p.function_tracer_works = host_function_tracer_works;
  return p;
}

Features::Features(Probe probe, std::vector<Feature> forced_off) : probe_(std::move(probe)) {
  for (Feature f : forced_off) forced_[static_cast<size_t>(f)] = true;
}

Features& Features::host() {
  static Features* features = [] {
    std::vector<Feature> off;
    if (const char* spec = std::getenv("TRACEKIT_KERNEL_FEATURES")) {
      auto parsed = parse_forced(spec);
      if (parsed)
        off = std::move(*parsed);
      else
        std::cerr << "tracekit: " << parsed.error().str() << " (ignored)\n";
    }
    return new Features(host_probe(), std::move(off));
  }();
  return *features;
}

State Features::state(Feature f) {
  auto i = static_cast<size_t>(f);
  if (forced_[i]) return State::kForcedOff;
  if (!found_[i]) found_[i] = probe(f);
  return *found_[i] ? State::kPresent : State::kAbsent;
}

Error Features::missing_error(Feature f, bool forced) {
  const FeatureInfo& i = info(f);
  if (forced)
    return Error{0, std::string(i.what) + " turned off by TRACEKIT_KERNEL_FEATURES", {},
                 "unset it to use " + std::string(i.name)};
  return Error{0, "this kernel has no " + std::string(i.what), {},
               std::string(i.provided_by) + " brings it"};
}

bool Features::probe(Feature f) {
  switch (f) {
    case F::kTracefs: return probe_.tracefs_filesystem();
    case F::kDebugfsTracing: return probe_.debugfs_tracing();
    case F::kPerfEvents:
    case F::kContextSwitch:
    case F::kUseClockid:
    case F::kMmap2:
    case F::kCommExec:
    case F::kSampleMaxStack:
    case F::kExcludeCallchain:
    case F::kPerfEventMaxStack: return probe_.perf_accepts(f);
    default: break;
  }
  if (!dir_) dir_ = probe_.tracing_dir();
  const std::string& d = *dir_;
  if (d.empty()) return false;
  const std::string trigger = d + "/events/sched/sched_switch/trigger";
  switch (f) {
    case F::kInstances: return exists(d + "/instances");
    case F::kEventTriggers: return exists(trigger);
    case F::kStacktraceTrigger: return file_has_word(trigger, "stacktrace");
    case F::kHistTriggers: return file_has_word(trigger, "hist");
    case F::kKprobes: return exists(d + "/kprobe_events");
    case F::kUprobes: return exists(d + "/uprobe_events");
    case F::kDynamicEvents: return exists(d + "/dynamic_events");
    case F::kEprobes: return exists(d + "/dynamic_events") && probe_.eprobe_works(d);
    case F::kErrorLog: return exists(d + "/error_log");
    case F::kBufferPercent: return exists(d + "/buffer_percent");
    case F::kSetEventPid: return exists(d + "/set_event_pid");
    case F::kEventFork: return exists(d + "/options/event-fork");
    case F::kFunctionTracer: return probe_.function_tracer_works(d);
    case F::kFunctionGraph:
      return file_has_word(d + "/available_tracers", "function_graph") &&
             probe_.function_tracer_works(d);
    case F::kFunctionProfiler: return exists(d + "/function_profile_enabled");
    case F::kSyscallTracepoints: return exists(d + "/events/syscalls");
    case F::kKprobeArgN: return exists(d + "/kprobe_events") && file_contains(d + "/README", "$arg<N>");
    case F::kUstring: return file_contains(d + "/README", "ustring");
    default: return false;
  }
}

}  // namespace tracekit::kernel
