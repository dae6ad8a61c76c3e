#include "kernel/tool_paths.hpp"

namespace tracekit::kernel {

using F = Feature;

std::vector<Feature> perf_stacks(std::vector<Feature> more) {
  std::vector<Feature> f{F::kPerfEvents};
  for (Feature m : more) f.push_back(m);  // (not insert(): GCC 12 -Warray-bounds misfires)
  return f;
}

// Kernels without instances trace at the top level, under perf-tools' lock:
// each tracefs list ends with those ways.
std::vector<Way> event_ways() {
  return {{"events in a private instance", {F::kEventTracing, F::kInstances}},
          {"events at the top level (perf-tools' lock)", {F::kEventTracing}}};
}

std::vector<Way> kernel_function_stack_ways() {
  return {{"kprobes with the instance's stacktrace option (kretprobes: stacktrace triggers)",
           {F::kInstances, F::kInstanceOptions, F::kKprobes}},
          {"the function tracer with func_stack_trace",
           {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
          {"kprobes at the top level (perf-tools' lock)", {F::kKprobes}},
          {"the function tracer at the top level (perf-tools' lock)", {F::kFunctionTracer}}};
}

std::vector<Way> syscall_event_ways() {
  return {{"the syscall tracepoints", {F::kSyscallTracepoints}},
          {"raw_syscalls with an id filter (libseccomp's numbers)", {F::kEventTracing}}};
}

std::vector<Way> tracepoint_stack_ways() {
  return {{"stacktrace triggers in a private instance", {F::kInstances, F::kStacktraceTrigger}},
          {"the instance's stacktrace option", {F::kInstances, F::kInstanceOptions}},
          {"stacktrace triggers at the top level (perf-tools' lock)", {F::kStacktraceTrigger}},
          {"the top level's stacktrace option (perf-tools' lock)", {F::kEventTracing}}};
}

std::vector<Way> event_pid_ways() {
  return {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
          {"a common_pid filter of the threads at the start", {F::kEventTracing}}};
}

std::vector<ToolUse> shared_uses() {
  return {
      {"perf readers",
       "user symbols of exited processes",
       {{"MMAP2 records (files checked by inode)", perf_stacks({F::kMmap2})},
        {"MMAP records", perf_stacks()}}},
      {"perf readers",
       "stack depth",
       {{"min(perf_event_max_stack, 127) frames", perf_stacks({F::kSampleMaxStack})},
        {"the kernel's 127 frames", perf_stacks()}}},
  };
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
  // The way closest to working says what is missing.
  bool first = true;
  for (const auto& w : use.ways) {
    std::vector<Feature> missing;
    for (Feature f : w.needs)
      if (!features.has(f)) missing.push_back(f);
    if (first || missing.size() < v.missing.size()) v.missing = std::move(missing);
    first = false;
  }
  return v;
}

}  // namespace tracekit::kernel
