#include "kernel/tool_paths.hpp"

namespace tracekit::kernel {

namespace {

using F = Feature;

// What every perf callchain reader needs: perf_event_open. (Callchain depth,
// MMAP2 and the COMM exec flag have fallbacks: the rows below.)
std::vector<Feature> perf_stacks(std::vector<Feature> more = {}) {
  std::vector<Feature> f{F::kPerfEvents};
  for (Feature m : more) f.push_back(m);  // (not insert(): GCC 12 -Warray-bounds misfires)
  return f;
}

std::vector<ToolUse> make_uses() {
  // Kernels without instances trace at the top level, under perf-tools'
  // lock: each tracefs row ends with those ways.
  const std::vector<Way> events{{"events in a private instance", {F::kEventTracing, F::kInstances}},
                                {"events at the top level (perf-tools' lock)", {F::kEventTracing}}};
  const std::vector<Way> kernel_functions{
      {"kprobes with the instance's stacktrace option (kretprobes: stacktrace triggers)",
       {F::kInstances, F::kInstanceOptions, F::kKprobes}},
      {"the function tracer with func_stack_trace",
       {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
      {"kprobes at the top level (perf-tools' lock)", {F::kKprobes}},
      {"the function tracer at the top level (perf-tools' lock)", {F::kFunctionTracer}}};
  const std::vector<Way> syscall_events{
      {"the syscall tracepoints", {F::kSyscallTracepoints}},
      {"raw_syscalls with an id filter (libseccomp's numbers)", {F::kEventTracing}}};
  const std::vector<Way> tracepoint_stacks{
      {"stacktrace triggers in a private instance", {F::kInstances, F::kStacktraceTrigger}},
      {"the instance's stacktrace option", {F::kInstances, F::kInstanceOptions}},
      {"stacktrace triggers at the top level (perf-tools' lock)", {F::kStacktraceTrigger}},
      {"the top level's stacktrace option (perf-tools' lock)", {F::kEventTracing}}};
  return {
      {"profile", "", {{"perf cpu-clock sampling with callchains", perf_stacks()}}},
      {"profile",
       "-U / -K",
       {{"perf callchains of one side", perf_stacks({F::kExcludeCallchain})},
        {"perf callchains of both sides, one dropped", perf_stacks()}}},
      {"profile",
       "--call-graph dwarf",
       {{"perf user registers and stack, unwound with libdw", perf_stacks({F::kUserStack})}}},
      {"offcputime",
       "--call-graph dwarf",
       {{"perf user registers and stack, unwound with libdw", perf_stacks({F::kUserStack})}}},
      {"perf readers",
       "user symbols of exited processes",
       {{"MMAP2 records (files checked by inode)", perf_stacks({F::kMmap2})},
        {"MMAP records", perf_stacks()}}},
      {"perf readers",
       "stack depth",
       {{"min(perf_event_max_stack, 127) frames", perf_stacks({F::kSampleMaxStack})},
        {"the kernel's 127 frames", perf_stacks()}}},
      {"offcputime",
       "",
       {{"perf sched_switch samples, switch-ins from context-switch records",
         perf_stacks({F::kContextSwitch})},
        {"perf sched_switch samples, switch-ins from their next_pid "
         "(one the tracepoint misses: the first sched_wakeup)",
         perf_stacks()}}},
      {"offcputime",
       "event order",
       {{"CLOCK_MONOTONIC record times (use_clockid)", perf_stacks({F::kUseClockid})},
        {"perf's own clock, read from the records", perf_stacks()}}},
      {"stackcount", "tracepoints", tracepoint_stacks},
      {"stackcount", "t:syscalls:*", syscall_events},
      {"stackcount", "kernel functions", kernel_functions},
      {"stackcount", "user functions (u:lib:func)", {{"uprobes read by perf", perf_stacks({F::kUprobes})}}},
      {"stackcount", "-U (user stacks)", {{"perf callchains", perf_stacks()}}},
      {"stackcount",
       "caller of a user function entry",
       {{"the return address at the user sp (8 bytes of stack)", perf_stacks({F::kUserStack})},
        {"frame-pointer callchains: the caller missing (said)", perf_stacks()}}},
      {"stackcount",
       "--call-graph dwarf",
       {{"perf user registers and stack, unwound with libdw", perf_stacks({F::kUserStack})}}},
      {"stacksnoop", "tracepoints", tracepoint_stacks},
      {"stacksnoop", "kernel functions", kernel_functions},
      {"tpoint", "", events},
      {"tpoint", "syscalls:*", syscall_events},
      {"tpoint",
       "-p PID",
       {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
        {"a common_pid filter of the threads at the start", {F::kEventTracing}}}},
      {"tpoint", "-s", {{"the stacktrace option", {F::kEventTracing}}}},
      {"kprobe",
       "",
       {{"kprobes (dynamic_events) in a private instance",
         {F::kInstances, F::kKprobes, F::kDynamicEvents}},
        {"kprobes (kprobe_events) in a private instance", {F::kInstances, F::kKprobes}},
        {"kprobes (kprobe_events) at the top level (perf-tools' lock)", {F::kKprobes}}}},
      {"kprobe",
       "$argN",
       {{"the kernel's $argN", {F::kKprobes, F::kKprobeArgN}},
        {"rewritten to the x86_64 argument registers (1 to 6)", {F::kKprobes}}}},
      {"kprobe",
       ":ustring",
       {{"the kernel's ustring", {F::kKprobes, F::kUstring}},
        {"rewritten to string (which reads user memory before 5.3)", {F::kKprobes}}}},
      {"kprobe",
       "refusals explained",
       {{"the kernel's error_log", {F::kErrorLog}}, {"errno only", {F::kKprobes}}}},
      {"uprobe",
       "",
       {{"uprobes (dynamic_events) in a private instance",
         {F::kInstances, F::kUprobes, F::kDynamicEvents}},
        {"uprobes (uprobe_events) in a private instance",
         {F::kInstances, F::kInstanceOptions, F::kUprobes}},
        {"uprobes (uprobe_events) at the top level (perf-tools' lock)", {F::kUprobes}}}},
      {"uprobe", "-s", {{"the userstacktrace option", {F::kUprobes}}}},
      {"opensnoop",
       "",
       {{"file names by kprobes on the syscall entries, descriptors from sys_exit tracepoints",
         {F::kKprobes, F::kSyscallTracepoints}},
        {"file names by eprobes on sys_enter tracepoints, descriptors from sys_exit tracepoints",
         {F::kEprobes, F::kSyscallTracepoints}},
        {"file names by uprobes on the C library's open wrappers (misses opens without it), "
         "descriptors from sys_exit tracepoints",
         {F::kUprobes, F::kSyscallTracepoints}},
        {"file names by kprobes on the syscall entries, descriptors from raw_syscalls:sys_exit",
         {F::kKprobes, F::kEventTracing}},
        {"file names by uprobes on the C library's open wrappers (misses opens without it), "
         "descriptors from raw_syscalls:sys_exit",
         {F::kUprobes, F::kEventTracing}}}},
      {"opensnoop",
       "-p PID",
       {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
        {"a common_pid filter of the threads at the start", {F::kEventTracing}}}},
      {"execsnoop",
       "",
       {{"sched_process_exec and sched_process_fork, arguments by kprobes on the exec syscall "
         "entries",
         {F::kKprobes, F::kEventTracing}},
        {"sched_process_exec and sched_process_fork, arguments by eprobes on "
         "sys_enter_execve(at)",
         {F::kEprobes, F::kSyscallTracepoints}},
        {"sched_process_exec and sched_process_fork, arguments by uprobes on the C library's "
         "exec functions (programs without it: /proc/PID/cmdline)",
         {F::kUprobes, F::kEventTracing}},
        {"sched_process_exec and sched_process_fork, arguments from /proc/PID/cmdline while "
         "the process lives",
         {F::kEventTracing}}}},
      {"syscount",
       "",
       {{"raw_syscalls:sys_enter read raw from a private instance, counted by id",
         {F::kEventTracing, F::kInstances}},
        {"raw_syscalls:sys_enter at the top level (perf-tools' lock), counted by id",
         {F::kEventTracing}}}},
      {"syscount",
       "-p PID",
       {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
        {"a common_pid filter of the threads at the start", {F::kEventTracing}}}},
      {"syscount",
       "command",
       {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
        {"every process traced, the command's descendants followed by sched_process_fork",
         {F::kEventTracing}}}},
      {"tcpretrans",
       "",
       {{"the tcp:tcp_retransmit_skb tracepoint in a private instance",
         {F::kTcp, F::kInstances, F::kTcpRetransmitTracepoint}},
        {"a kprobe on tcp_retransmit_skb reading the socket in a private instance",
         {F::kTcp, F::kInstances, F::kKprobes}},
        {"the tcp:tcp_retransmit_skb tracepoint at the top level (perf-tools' lock)",
         {F::kTcp, F::kTcpRetransmitTracepoint}},
        {"a kprobe on tcp_retransmit_skb at the top level (perf-tools' lock)", {F::kTcp, F::kKprobes}}}},
      {"tcpretrans", "-l", {{"a kprobe on tcp_send_loss_probe", {F::kTcp, F::kKprobes}}}},
      {"tcpretrans", "-s", tracepoint_stacks},
      {"iosnoop", "", events},
      {"iosnoop",
       "-Q",
       {{"block_rq_insert, else block_rq_issue for requests never inserted", {F::kEventTracing}}}},
      {"iolatency", "", events},
      {"iolatency",
       "-Q",
       {{"block_rq_insert, else block_rq_issue for requests never inserted", {F::kEventTracing}}}},
      {"killsnoop",
       "",
       {{"sys_enter/sys_exit tracepoints of kill, tkill and tgkill", {F::kSyscallTracepoints}},
        {"raw_syscalls with an id filter, the arguments from args[]", {F::kEventTracing}}}},
      {"killsnoop",
       "-p PID",
       {{"a kernel filter on the sys_enter tracepoints' target", {F::kSyscallTracepoints}},
        {"checked in user space (raw_syscalls' args cannot be filtered)", {F::kEventTracing}}}},
      {"killsnoop",
       "-n name",
       {{"a kernel filter on comm for a plain name, else the regex checked in user space",
         {F::kEventTracing}}}},
      {"funccount",
       "kernel functions",
       {{"the function profiler (perf-tools' lock)", {F::kFunctionProfiler}},
        {"perf counters on kprobes", {F::kKprobes, F::kPerfEvents}},
        {"the function tracer in a private instance, counted by address",
         {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
        {"the function tracer at the top level (perf-tools' lock), counted by address",
         {F::kFunctionTracer}}}},
      // -p: kernel functions need kprobes (or the function tracer); events
      // (t:, lib:) are counted per thread by perf as without it.
      {"funccount",
       "-p PID, kernel functions",
       {{"perf counters on kprobes in the process's threads", {F::kKprobes, F::kPerfEvents}},
        {"the function tracer with a pid list", {F::kFunctionTracer}}}},
      {"funccount",
       "-p PID, t: and lib:",
       {{"perf counters on the events in the process's threads", {F::kPerfEvents}}}},
      {"funccount",
       "t:, lib: (tracepoints, uprobes)",
       {{"perf counters on the events", {F::kPerfEvents}}}},
      {"funccount",
       "more than 4 tracepoints",
       {{"the events in a private instance, counted by id", {F::kInstances, F::kEventTracing}},
        {"perf counters on the events", {F::kPerfEvents}}}},
      {"bitesize",
       "",
       {{"perf counters on block:block_rq_issue, one per bucket, filtered on nr_sector",
         {F::kPerfEvents, F::kEventTracing}}}},
      {"cachestat",
       "",
       {{"the function profiler (perf-tools' lock) on the page cache functions",
         {F::kFunctionProfiler}},
        {"perf counters on kprobes on the page cache functions", {F::kKprobes, F::kPerfEvents}},
        {"the function tracer in a private instance, counted by address",
         {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
        {"the function tracer at the top level (perf-tools' lock), counted by address",
         {F::kFunctionTracer}}}},
      {"functrace",
       "",
       {{"the function tracer in a private instance",
         {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
        {"the function tracer at the top level (perf-tools' lock)", {F::kFunctionTracer}}}},
      {"functrace",
       "-p PID / -L TID",
       {{"a pid list of the instance's own",
         {F::kInstances, F::kInstanceOptions, F::kInstanceFtracePid, F::kFunctionTracer}},
        {"the top level's pid list (perf-tools' lock)", {F::kFunctionTracer}}}},
      {"funcgraph",
       "",
       {{"function_graph in a private instance where the kernel allows it (Linux 6.12+), "
         "else at the top level (perf-tools' lock)",
         {F::kFunctionGraph}}}},
      {"funcslower",
       "",
       {{"function_graph with tracing_thresh (perf-tools' lock)", {F::kFunctionGraph}}}},
      {"funcgraph", "-T", {{"the funcgraph-tail option", {F::kFunctionGraph, F::kFuncgraphTail}}}},
      {"funcslower",
       "-p PID / -L TID",
       {{"a pid list of the trace array's own (the top level's under tracing_thresh)",
         {F::kFunctionGraph, F::kInstanceFtracePid}}}},
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
