// What dead runs left in tracefs: instances named tracekit_<pid>_<n> and
// probe groups named tracekit_<pid>[...] whose <pid> no longer runs (a run
// killed with SIGKILL cannot clean up). Every tool removes them when it
// starts; reset-tracing does it on demand.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::tracefs {

struct Cleanup {
  // "instance tracekit_12_0", "probe tracekit_12/p_vfs_read_0"; with
  // include_live, a run still alive is named: "instance tracekit_12_0 (pid 12
  // is alive)".
  std::vector<std::string> removed;
  // The same, with the reason appended: "instance tracekit_12_0: Device or
  // resource busy (...)".
  std::vector<std::string> failed;
  // The sweep stopped early (SweepHooks::interrupted): the rest is still there.
  bool interrupted = false;
};

struct SweepHooks {
  // Called before each leftover is swept, with its name as removed lists it
  // and, for an instance, how many triggers it holds ("instance
  // tracekit_12_0, 324 triggers"): each takes the kernel a synchronisation.
  std::function<void(const std::string&)> starting;
  // Asked between steps; true stops the sweep where it is.
  std::function<bool()> interrupted;
};

// Removes the leftovers of dead runs. include_live: also those of runs that
// are still alive (reset-tracing -f), except the calling process's own.
// Instances go first: inside each, all events are disabled (each enabled
// event, then events/enable),
// every trigger listed in events/*/*/trigger is removed ("!<command>"),
// current_tracer is set to nop and set_ftrace_filter emptied (where they are
// not already), then the directory is removed. Then the probes of those
// groups (from dynamic_events, else kprobe_events and uprobe_events): at the
// top level each probe event is disabled, its triggers removed and its filter
// cleared, then "-:group/event" is appended to the file that lists it. A
// step that fails does not stop the others; only the final removal decides
// between removed and failed. Never throws.
Cleanup remove_leftovers(const std::string& tracing_dir, bool include_live = false,
                         const SweepHooks& hooks = {});

// What a tool does at start: removes dead runs' leftovers, saying on warn
// what it removes ("stackcount: removing instance tracekit_12_0, 324 triggers,
// left by a dead run...") and what it could not. Error (EINTR) when
// interrupted() stopped it (said on warn too): the tool ends as on any
// Ctrl-C.
Status sweep_dead_runs(const std::string& tracing_dir, const std::string& tool, std::ostream& warn,
                       const std::function<bool()>& interrupted);

// reset-tracing -f: the top-level ftrace state perf-tools' reset-ftrace
// resets, and the other global function filters: current_tracer back to
// nop; set_ftrace_filter, set_ftrace_notrace, set_graph_function,
// set_graph_notrace and set_ftrace_pid emptied; options func_stack_trace,
// stacktrace and userstacktrace off, tracing_thresh, max_graph_depth and the
// funcgraph options back to their defaults (the options first, while their
// tracer is still current: before Linux 4.2 its own options show only
// then). Only what differs from the default is
// written; files this kernel lacks or will not show (EPERM under lockdown)
// are skipped. removed lists what changed ("current_tracer: function -> nop",
// "set_ftrace_filter: 3 entries emptied", "options/stacktrace: 1 -> 0").
// tracing_on, event enables and other programs' probes are left alone.
Cleanup reset_global(const std::string& tracing_dir);

// The pid in a name of ours ("tracekit_123_0", "tracekit_123"), or -1 for any
// other name ("tracekit_", "tracekit_12x", "tracekit_1_2_3", "foo_12").
int owner_pid(const std::string& name);

// The group and event of a probe definition line as dynamic_events,
// kprobe_events or uprobe_events list it ("p:tracekit_123/ev /bin/true:0x..."
// -> {"tracekit_123", "ev"}); empty strings when the line is not one. Pure.
struct ProbeLine {
  std::string group, event;
};
ProbeLine parse_probe_line(std::string_view line);

}  // namespace tracekit::tracefs
