// The kernel features the tools use, found on this host by probing (never by
// version number), each with what provides it (a CONFIG option or the Linux
// version it came in) and the fallback the tools take without it.
//
// Features::host() probes lazily: a feature is probed the first time it is
// asked for, and the answer kept for the run. TRACEKIT_KERNEL_FEATURES in the
// environment ("-context_switch,-instances": names as feature_table() and
// `tracekit features` give them) makes features count as missing whatever
// the host has: tests force every fallback so.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::kernel {

enum class Feature : uint8_t {
  // tracefs
  kTracefs,            // the tracefs filesystem
  kDebugfsTracing,     // debugfs's tracing directory
  kInstances,          // instances/
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
  kSyscallTracepoints, // events/syscalls
  kKprobeArgN,         // kprobe fetch arg $argN
  kUstring,            // fetch type ustring
  // perf_event_open
  kPerfEvents,         // perf_event_open itself (software events)
  kContextSwitch,      // attr.context_switch: PERF_RECORD_SWITCH(_CPU_WIDE)
  kUseClockid,         // attr.use_clockid
  kMmap2,              // attr.mmap2: PERF_RECORD_MMAP2
  kCommExec,           // attr.comm_exec
  kSampleMaxStack,     // attr.sample_max_stack
  kExcludeCallchain,   // attr.exclude_callchain_kernel/user
  kPerfEventMaxStack,  // kernel.perf_event_max_stack
  kCount
};

struct FeatureInfo {
  Feature id;
  std::string_view name;         // as printed and forced: "context_switch"
  std::string_view what;         // "perf context-switch records (PERF_RECORD_SWITCH)"
  std::string_view provided_by;  // "Linux 4.3", "CONFIG_HIST_TRIGGERS (Linux 4.7)"
  std::string_view fallback;     // what the tools do without it; "" when nothing
};

// Every feature, in Feature order.
std::span<const FeatureInfo> feature_table();
const FeatureInfo& info(Feature f);
// The feature of a name, nullopt for an unknown one.
std::optional<Feature> feature_named(std::string_view name);

// What TRACEKIT_KERNEL_FEATURES forces off. Error: an entry that is not
// "-NAME" of a known feature (the message names it). Pure.
Result<std::vector<Feature>> parse_forced(std::string_view spec);

enum class State : uint8_t {
  kPresent,
  kAbsent,
  kForcedOff,  // present or not, TRACEKIT_KERNEL_FEATURES turned it off
};

// How a feature is probed: the tracing directory's files, and perf attr
// bits, abstracted so that unit tests can give fake tracefs trees and fake
// perf answers.
struct Probe {
  // The tracing directory (tracefs, or debugfs's tracing/), "" when there
  // is none; and whether it is a tracefs filesystem of its own.
  std::function<std::string()> tracing_dir;
  std::function<bool()> tracefs_filesystem;  // "tracefs" in /proc/filesystems
  std::function<bool()> debugfs_tracing;     // debugfs has tracing/
  // Whether perf_event_open accepts a software event with this attr change
  // applied (see features.cpp: one bit at a time).
  std::function<bool(Feature)> perf_accepts;
  // Whether an eprobe can be created (and was removed again).
  std::function<bool(const std::string& tracing_dir)> eprobe_works;
  // Whether the function tracer can be started in an instance (lockdown
  // refuses it although available_tracers lists it).
  std::function<bool(const std::string& tracing_dir)> function_tracer_works;
};

// The host's probes: /proc/filesystems, tracefs::tracing_dir() (which mounts
// tracefs when it can), perf_event_open on the calling thread.
Probe host_probe();

class Features {
 public:
  explicit Features(Probe probe, std::vector<Feature> forced_off = {});

  // The host's features, with TRACEKIT_KERNEL_FEATURES applied (an invalid
  // value is reported on stderr once, and ignored).
  static Features& host();

  bool has(Feature f) { return state(f) == State::kPresent; }
  State state(Feature f);
  // Whether TRACEKIT_KERNEL_FEATURES turned f off (nothing is probed): for
  // code that probes a directory of its own (a test's fake tree).
  bool forced_off(Feature f) const { return forced_[static_cast<size_t>(f)]; }
  // The error a tool gives when it needs f: "this kernel has no WHAT
  // (PROVIDED_BY)", or "... turned off by TRACEKIT_KERNEL_FEATURES".
  Error missing(Feature f) { return missing_error(f, state(f) == State::kForcedOff); }
  static Error missing_error(Feature f, bool forced);

 private:
  bool probe(Feature f);
  Probe probe_;
  std::array<std::optional<bool>, static_cast<size_t>(Feature::kCount)> found_;
  std::array<bool, static_cast<size_t>(Feature::kCount)> forced_{};
  std::optional<std::string> dir_;
};

}  // namespace tracekit::kernel
