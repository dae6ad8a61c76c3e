// Which tools and options work on this host, and by which path: for each
// tool (and each option that needs more than the tool itself: the table of
// session/tool_table.hpp), the ways the
// code can do it, in the order it prefers them, each with the features it
// needs. The first way whose features are all present is the one a run
// takes; when none is, the option does not work, and the features missing
// from the way closest to working say why. The table mirrors what the tools
// do today: a fallback is listed only once the code has it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernel/features.hpp"

namespace tracekit::kernel {

struct Way {
  std::string_view path;        // "perf cpu-clock sampling with callchains"
  std::vector<Feature> needs;   // all of them
};

struct ToolUse {
  std::string_view tool;    // "offcputime"
  std::string_view option;  // "" for the tool itself, else "-s", "-p PID", ...
  std::vector<Way> ways;    // preferred first
};

// The ways several tools share (each tool's own rows are in its folder:
// session/tool_table.hpp).
// What every perf callchain reader needs (perf_event_open), and more.
std::vector<Feature> perf_stacks(std::vector<Feature> more = {});
// Events of one tracefs trace: a private instance, else the top level.
std::vector<Way> event_ways();
// Kernel stacks of kernel functions (kprobes, the function tracer).
std::vector<Way> kernel_function_stack_ways();
// The syscall tracepoints, else raw_syscalls.
std::vector<Way> syscall_event_ways();
// Kernel stacks of tracepoints.
std::vector<Way> tracepoint_stack_ways();
// -p PID of the event tools: set_event_pid, else a common_pid filter.
std::vector<Way> event_pid_ways();
// The rows of no one tool: what every perf stack reader does.
std::vector<ToolUse> shared_uses();

// What a use comes to on a host.
struct Verdict {
  const Way* way = nullptr;        // the way taken; null: it does not work here
  std::vector<Feature> missing;    // of the way closest to working, when none works
};
Verdict judge(const ToolUse& use, Features& features);

}  // namespace tracekit::kernel
