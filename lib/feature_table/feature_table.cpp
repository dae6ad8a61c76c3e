#include "feature_table/feature_table.hpp"

#include <cstdlib>
#include <iostream>
#include <string>

#include "util/strings.hpp"

namespace tracekit::kernel {

namespace {

using F = Feature;

constexpr FeatureInfo kTable[] = {
    {F::kTracefs, "tracefs", "the tracefs filesystem", "Linux 4.1",
     "debugfs's tracing directory"},
    {F::kDebugfsTracing, "debugfs_tracing", "ftrace under debugfs (/sys/kernel/debug/tracing)",
     "CONFIG_FTRACE, CONFIG_DEBUG_FS", ""},
    {F::kEventTracing, "event_tracing", "ftrace event tracing (tracefs or debugfs)",
     "CONFIG_FTRACE, CONFIG_EVENT_TRACING", ""},
    {F::kInstances, "instances", "tracefs instances (private trace buffers)", "Linux 3.10",
     "the top level, under perf-tools' lock"},
    {F::kInstanceOptions, "instance_options",
     "trace options and a tracer of an instance's own (options/, current_tracer)",
     "Linux 4.4",
     "the top level, under perf-tools' lock, for a run that needs a trace option (the "
     "stacktrace or userstacktrace option, the function tracer); else an instance whose "
     "buffer overwrites when full (overruns counted)"},
    {F::kInstanceFtracePid, "instance_ftrace_pid",
     "a function-tracer pid list of each instance's own (set_ftrace_pid in instances)",
     "Linux 4.6",
     "the top level's pid list (perf-tools' lock); funcslower -p/-L refused (the threshold "
     "path would report every task)"},
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
    {F::kFuncgraphTail, "funcgraph_tail",
     "function names on function_graph's closing braces (options/funcgraph-tail)",
     "Linux after 3.10 (absent in 3.10.108, present in 4.4.121)", "funcgraph -T refused"},
    {F::kSyscallTracepoints, "syscall_tracepoints", "syscalls:* tracepoints",
     "CONFIG_FTRACE_SYSCALLS", "raw_syscalls with an id filter"},
    {F::kKprobeArgN, "kprobe_argn", "the $argN fetch argument", "Linux 4.20",
     "registers by the calling convention"},
    {F::kUstring, "ustring", "the ustring fetch type (user-space strings)", "Linux 5.3",
     "string"},
    {F::kTcpRetransmitTracepoint, "tcp_retransmit_tp",
     "the tcp:tcp_retransmit_skb tracepoint", "Linux 4.15",
     "a kprobe on tcp_retransmit_skb"},
    {F::kProbeAppend, "probe_append",
     "several probes on one kprobe or uprobe event (appended to it)", "Linux 5.4",
     "one event per probe"},
    {F::kProbeImmediate, "probe_immediate", "immediate values as probe fetch arguments (\\imm)",
     "Linux 5.7", "one event per system call where probes share events"},
    {F::kUprobeFetchArgs, "uprobe_fetchargs", "fetch arguments on uprobes",
     "Linux 3.14 (found by the tracing README's fetcharg syntax)",
     "uprobe -s: user stacks without the caller of an entry probe"},
    {F::kTcp, "tcp", "TCP/IPv4 (/proc/net/tcp)", "CONFIG_INET", ""},
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
    {F::kUserStack, "user_stack",
     "perf user register and stack samples (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER)",
     "Linux 3.7", ""},
    {F::kLostSamples, "lost_samples", "perf lost-sample counts read from the event (PERF_FORMAT_LOST)",
     "Linux 6.0",
     "lost records counted from PERF_RECORD_LOST alone (records lost at the end of a run go "
     "uncounted)"},
};
static_assert(std::size(kTable) == static_cast<size_t>(F::kCount));

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

const std::vector<Feature>& forced_features() {
  static const std::vector<Feature> off = [] {
    const char* spec = std::getenv("TRACEKIT_KERNEL_FEATURES");
    if (!spec) return std::vector<Feature>{};
    auto parsed = parse_forced(spec);
    if (parsed) return std::move(*parsed);
    std::cerr << "tracekit: " << parsed.error().str() << " (ignored)\n";
    return std::vector<Feature>{};
  }();
  return off;
}

bool forced_off(Feature f) {
  for (Feature o : forced_features())
    if (o == f) return true;
  return false;
}

namespace {
// "the function tracer" -> "function tracer": "this kernel has no ...".
std::string without_article(std::string_view what) {
  return std::string(what.rfind("the ", 0) == 0 ? what.substr(4) : what);
}
}  // namespace

Error missing_error(Feature f, bool forced) {
  const FeatureInfo& i = info(f);
  if (forced)
    return Error{0, std::string(i.what) + " turned off by TRACEKIT_KERNEL_FEATURES", {},
                 "unset it to use " + std::string(i.name)};
  return Error{0, "this kernel has no " + without_article(i.what), {},
               std::string(i.provided_by) + " brings it"};
}

}  // namespace tracekit::kernel
