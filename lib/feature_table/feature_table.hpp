// The kernel features the tools use, by name, each with what provides it (a
// CONFIG option or the Linux version it came in) and the fallback the tools
// take without it; and TRACEKIT_KERNEL_FEATURES ("-context_switch,-instances":
// names as feature_table() and `tracekit features` give them), which makes
// features count as missing whatever the host has: tests force every
// fallback so. Probing the host is kernel/features.hpp's; this table is
// what code at any layer (tracefs, syscalls, perf) needs to honour the
// forcing, so it sits below tracefs (lib/LAYERS), while the probing, which
// goes through tracefs, sits above it. Its namespace is still kernel's:
// kernel::Feature is one name at every layer.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::kernel {

enum class Feature : uint8_t {
  // tracefs
  kTracefs,            // the tracefs filesystem
  kDebugfsTracing,     // debugfs's tracing directory
  kEventTracing,       // a tracing directory with events/, either way
  kInstances,          // instances/
  kInstanceOptions,    // options/ in each instance (its own trace options)
  kInstanceFtracePid,  // set_ftrace_pid in each instance (a pid list per trace array)
  kEventTriggers,      // events/*/*/trigger
  kStacktraceTrigger,  // the "stacktrace" trigger command
  kHistTriggers,       // "hist" triggers
  kKprobes,            // kprobe_events
  kUprobes,            // uprobe_events
  kDynamicEvents,      // dynamic_events
  kEprobes,            // "e:" event probes (created to be sure)
  kErrorLog,           // error_log
  kBufferPercent,      // buffer_percent
  kSetEventPid,        // set_event_pid
  kEventFork,          // options/event-fork
  kFunctionTracer,     // the function tracer, usable
  kFunctionGraph,      // the function_graph tracer
  kFunctionProfiler,   // function_profile_enabled
  kFuncgraphTail,      // options/funcgraph-tail
  kSyscallTracepoints, // events/syscalls
  kKprobeArgN,         // kprobe fetch arg $argN
  kUstring,            // fetch type ustring
  kTcpRetransmitTracepoint,  // tcp:tcp_retransmit_skb
  kProbeAppend,        // several probes on one kprobe/uprobe event
  kProbeImmediate,     // immediate values (\imm) as probe fetch arguments
  kUprobeFetchArgs,    // fetch arguments on uprobes
  kTcp,                // TCP/IPv4 in the kernel (/proc/net/tcp)
  // perf_event_open
  kPerfEvents,         // perf_event_open itself (software events)
  kContextSwitch,      // attr.context_switch: PERF_RECORD_SWITCH(_CPU_WIDE)
  kUseClockid,         // attr.use_clockid
  kMmap2,              // attr.mmap2: PERF_RECORD_MMAP2
  kCommExec,           // attr.comm_exec
  kSampleMaxStack,     // attr.sample_max_stack
  kExcludeCallchain,   // attr.exclude_callchain_kernel/user
  kPerfEventMaxStack,  // kernel.perf_event_max_stack
  kUserStack,          // PERF_SAMPLE_REGS_USER + PERF_SAMPLE_STACK_USER
  kLostSamples,        // read_format PERF_FORMAT_LOST
  kCount
};

struct FeatureInfo {
  Feature id;
  std::string_view name;         // as printed and forced: "context_switch"
  std::string_view what;         // "perf context-switch records (PERF_RECORD_SWITCH)"
  std::string_view provided_by;  // "Linux 4.3", "CONFIG_HIST_TRIGGERS (Linux 4.7)"
  std::string_view fallback;     // what the tools do without it; "" when nothing
};

// Whether f is one of perf_event_open's (the section of Feature from
// kPerfEvents on): probed by opening perf events, with no tracefs. Pure.
constexpr bool perf_feature(Feature f) {
  return f >= Feature::kPerfEvents && f < Feature::kCount;
}

// Every feature, in Feature order.
std::span<const FeatureInfo> feature_table();
const FeatureInfo& info(Feature f);
// The feature of a name, nullopt for an unknown one.
std::optional<Feature> feature_named(std::string_view name);

// What TRACEKIT_KERNEL_FEATURES forces off. Error: an entry that is not
// "-NAME" of a known feature (the message names it). Pure.
Result<std::vector<Feature>> parse_forced(std::string_view spec);

// Whether TRACEKIT_KERNEL_FEATURES turns f off (read once per process; an
// invalid value is reported on stderr once, and ignored).
bool forced_off(Feature f);
// Every feature TRACEKIT_KERNEL_FEATURES turns off.
const std::vector<Feature>& forced_features();

// The error a tool gives when it needs f: "this kernel has no WHAT" (hint:
// "PROVIDED_BY brings it"), or, forced, "WHAT turned off by
// TRACEKIT_KERNEL_FEATURES". Never an errno: the feature is the reason.
Error missing_error(Feature f, bool forced);

}  // namespace tracekit::kernel
