// The kernel features the tools use (feature_table/feature_table.hpp), found on this host
// by probing, never by version number.
//
// Features::host() probes lazily: a feature is probed the first time it is
// asked for, and the answer kept for the run; the features
// TRACEKIT_KERNEL_FEATURES turns off count as missing without being probed.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "util/result.hpp"

namespace tracekit::kernel {

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
  // Whether an instance has trace options and a tracer of its own (created
  // to be sure: before Linux 4.4 an instance has neither options/ nor
  // current_tracer; the top level's options are every buffer's). Unset: no.
  std::function<bool(const std::string& tracing_dir)> instance_options;
  // Whether an instance has a set_ftrace_pid of its own. Unset: no.
  std::function<bool(const std::string& tracing_dir)> instance_ftrace_pid;
};

// The host's probes: /proc/filesystems, tracefs::tracing_dir() (which mounts
// tracefs when it can), perf_event_open on the calling thread.
Probe host_probe();

class Features {
 public:
  explicit Features(Probe probe, std::vector<Feature> forced_off = {});

  // The host's features, with TRACEKIT_KERNEL_FEATURES applied.
  static Features& host();

  bool has(Feature f) { return state(f) == State::kPresent; }
  State state(Feature f);

  // The error a tool gives when it needs f (missing_error()).
  Error missing(Feature f) { return missing_error(f, state(f) == State::kForcedOff); }

 private:
  bool probe(Feature f);
  Probe probe_;
  std::array<std::optional<bool>, static_cast<size_t>(Feature::kCount)> found_;
  std::array<bool, static_cast<size_t>(Feature::kCount)> forced_{};
  std::optional<std::string> dir_;
};

// Whether the kernel of tracing_dir has syscalls:* tracepoints, with
// TRACEKIT_KERNEL_FEATURES applied (a tracing directory other than the
// host's: tests).
bool has_syscall_tracepoints(const std::string& tracing_dir);

}  // namespace tracekit::kernel
