#include "kernel/tool_paths.hpp"

namespace tracekit::kernel {

namespace {

using F = Feature;

// What every perf callchain reader asks of perf_event_open today: callchains
// with sample_max_stack, and COMM/MMAP2 records with the exec flag.
std::vector<Feature> perf_stacks(std::vector<Feature> more = {}) {
  std::vector<Feature> f{F::kPerfEvents, F::kSampleMaxStack, F::kMmap2, F::kCommExec};
  for (Feature m : more) f.push_back(m);  // (not insert(): GCC 12 -Warray-bounds misfires)
  return f;
}

std::vector<ToolUse> make_uses() {
  const Way instance_events{"events in a private instance", {F::kInstances}};
  return {
      {"profile", "", {{"perf cpu-clock sampling with callchains", perf_stacks()}}},
      {"profile", "-U / -K", {{"perf callchains of one side", perf_stacks({F::kExcludeCallchain})}}},
      {"offcputime",
       "",
       {{"perf sched_switch samples, switch-ins from context-switch records (tracefs)",
         perf_stacks({F::kContextSwitch, F::kUseClockid, F::kTracefs})},
        {"perf sched_switch samples, switch-ins from context-switch records (debugfs)",
         perf_stacks({F::kContextSwitch, F::kUseClockid, F::kDebugfsTracing})}}},
      {"stackcount",
       "tracepoints",
       {{"stacktrace triggers in a private instance", {F::kInstances, F::kStacktraceTrigger}}}},
      {"stackcount",
       "kernel functions",
       {{"kprobes with stacktrace triggers", {F::kInstances, F::kKprobes, F::kStacktraceTrigger}},
        {"the function tracer with func_stack_trace", {F::kInstances, F::kFunctionTracer}}}},
      {"stackcount", "user functions (u:lib:func)", {{"uprobes read by perf", perf_stacks({F::kUprobes})}}},
      {"stackcount", "-U (user stacks)", {{"perf callchains", perf_stacks()}}},
      {"stacksnoop",
       "",
       {{"kprobes or tracepoints with stacktrace triggers",
         {F::kInstances, F::kStacktraceTrigger}},
        {"the function tracer with func_stack_trace", {F::kInstances, F::kFunctionTracer}}}},
      {"tpoint", "", {instance_events}},
      {"tpoint",
       "-p PID",
       {{"set_event_pid following forks", {F::kInstances, F::kSetEventPid, F::kEventFork}},
        {"a common_pid filter of the threads at the start", {F::kInstances}}}},
      {"tpoint", "-s", {{"the instance's stacktrace option", {F::kInstances}}}},
      {"kprobe", "", {{"kprobe events in a private instance", {F::kInstances, F::kKprobes}}}},
      {"kprobe", "$argN", {{"the kernel's $argN", {F::kKprobes, F::kKprobeArgN}}}},
      {"kprobe", ":ustring", {{"the kernel's ustring", {F::kKprobes, F::kUstring}}}},
      {"kprobe",
       "refusals explained",
       {{"the kernel's error_log", {F::kErrorLog}}, {"errno only", {}}}},
      {"uprobe", "", {{"uprobe events in a private instance", {F::kInstances, F::kUprobes}}}},
      {"uprobe", "-s", {{"the instance's userstacktrace option", {F::kInstances, F::kUprobes}}}},
      {"reset-tracing", "", {{"tracefs", {F::kTracefs}}, {"debugfs's tracing", {F::kDebugfsTracing}}}},
  };
}

}  // namespace

const std::vector<ToolUse>& tool_uses() {
  static const std::vector<ToolUse> uses = make_uses();
  return uses;
}

Verdict judge(const ToolUse& use, Features& features) {
  Verdict v;
  for (const auto& w : use.ways) {
    bool all = true;
    for (Feature f : w.needs) all = all && features.has(f);
    if (all) {
      v.way = &w;
      return v;
    }
  }
  if (!use.ways.empty())
    for (Feature f : use.ways.front().needs)
      if (!features.has(f)) v.missing.push_back(f);
  return v;
}

}  // namespace tracekit::kernel
