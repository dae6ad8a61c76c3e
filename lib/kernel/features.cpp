// How each feature is probed: tracefs features by the files the kernel
// shows (a trigger file lists the trigger commands the kernel knows; the
// tracefs README lists the fetch-arg syntax); the function tracer by whether
// available_filter_functions can be read (kernel lockdown refuses it, while
// available_tracers still lists "function"); eprobes by creating one (a
// kernel without CONFIG_EPROBE_EVENTS still lists "e:" in its README); perf
// attr bits by opening a software event on the calling thread with one bit
// set at a time (a kernel refuses bits it does not know with EINVAL).
#include "kernel/features.hpp"
#include "kernel/perf_open.hpp"

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
    case F::kUserStack:
      a.sample_type = PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
      a.sample_regs_user = (1u << 7) | (1u << 8);  // x86 sp, ip: any valid mask would do
      a.sample_stack_user = 8192;
      break;
    case F::kLostSamples: a.read_format = PERF_FORMAT_LOST; break;
    default: return EINVAL;
  }
  Fd fd(perf_event_open_cloexec(&a, 0, -1, -1));
  if (!fd.valid()) return errno;
  // The lost count must be there when read: a kernel that took a
  // read_format bit it does not know and ignored it would read short.
  // (PERF_FORMAT_LOST came in 6.0 and was backported to 4.19.y: 4.19.304
  // reads 16 bytes, 4.14.325 refuses the bit.)
  if (f == F::kLostSamples) {
    uint64_t words[4];
    if (::read(fd.get(), words, sizeof words) != 2 * sizeof(uint64_t)) return EINVAL;
  }
  return 0;
}

bool host_perf_accepts(F f) {
  if (f == F::kPerfEventMaxStack) return exists("/proc/sys/kernel/perf_event_max_stack");
  // sample_max_stack sits in what was reserved space, which 4.4.121 took
  // and ignored: the per-event depth came with the sysctl (Linux 4.8).
  if (f == F::kSampleMaxStack && !exists("/proc/sys/kernel/perf_event_max_stack")) return false;
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

bool host_instance_options(const std::string& dir) {
  auto inst = tracefs::Instance::create(dir);
  return inst && inst->has("options/overwrite") && inst->has("current_tracer");
}

bool host_instance_ftrace_pid(const std::string& dir) {
  auto inst = tracefs::Instance::create(dir);
  return inst && inst->has("set_ftrace_pid");
}

bool host_function_tracer_works(const std::string& dir) {
  if (!file_has_word(dir + "/available_tracers", "function")) return false;
  // Kernel lockdown: readable by name, refused at read.
  Fd fd(::open((dir + "/available_filter_functions").c_str(), O_RDONLY | O_CLOEXEC));
  char c;
  return fd.valid() && ::read(fd.get(), &c, 1) == 1;
}

}  // namespace

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
  p.instance_options = host_instance_options;
  p.instance_ftrace_pid = host_instance_ftrace_pid;
  return p;
}

Features::Features(Probe probe, std::vector<Feature> forced_off) : probe_(std::move(probe)) {
  for (Feature f : forced_off) forced_[static_cast<size_t>(f)] = true;
}

Features& Features::host() {
  static Features* features = new Features(host_probe(), forced_features());
  return *features;
}

State Features::state(Feature f) {
  auto i = static_cast<size_t>(f);
  if (forced_[i]) return State::kForcedOff;
  if (!found_[i]) found_[i] = probe(f);
  return *found_[i] ? State::kPresent : State::kAbsent;
}

bool Features::probe(Feature f) {
  if (f == F::kTracefs) return probe_.tracefs_filesystem();
  if (f == F::kDebugfsTracing) return probe_.debugfs_tracing();
  if (perf_feature(f)) return probe_.perf_accepts(f);
  if (f == F::kTcp) return exists("/proc/net/tcp");
  if (!dir_) dir_ = probe_.tracing_dir();
  const std::string& d = *dir_;
  if (d.empty()) return false;
  const std::string trigger = d + "/events/sched/sched_switch/trigger";
  switch (f) {
    case F::kEventTracing: return exists(d + "/events");
    case F::kInstances: return exists(d + "/instances");
    case F::kInstanceOptions:
      return exists(d + "/instances") && probe_.instance_options && probe_.instance_options(d);
    case F::kInstanceFtracePid:
      return exists(d + "/instances") && probe_.instance_ftrace_pid &&
             probe_.instance_ftrace_pid(d);
    // (3.10 shows function_graph's options only while it is the tracer,
    // and never funcgraph-tail; later kernels show every tracer's.)
    case F::kFuncgraphTail: return exists(d + "/options/funcgraph-tail");
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
    case F::kTcpRetransmitTracepoint: return exists(d + "/events/tcp/tcp_retransmit_skb");
    // 5.4's README says "Create/append/remove/show" of kprobe_events and
    // uprobe_events; before, a probe with an event's name replaced it.
    case F::kProbeAppend: return file_contains(d + "/README", "Create/append/remove/show");
    case F::kProbeImmediate: return file_contains(d + "/README", "\\imm-value");
    // The README's probe section names the fetch arguments ("fetcharg:"),
    // uprobes' among them; a kernel that has them but not that section
    // counts as without.
    case F::kUprobeFetchArgs:
      return exists(d + "/uprobe_events") && file_contains(d + "/README", "fetcharg");
    default: return false;
  }
}

bool has_syscall_tracepoints(const std::string& tracing_dir) {
  Probe probe;
  probe.tracing_dir = [tracing_dir] { return tracing_dir; };
  return Features(probe, forced_features()).has(Feature::kSyscallTracepoints);
}

}  // namespace tracekit::kernel
