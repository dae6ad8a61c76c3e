// funccount: counts calls of kernel functions (and, as bcc's funccount,
// hits of tracepoints and user functions), by the cheapest way this kernel
// has:
//
//  - the function profiler (function_profile_enabled, trace_stat/function*;
//    CONFIG_FUNCTION_PROFILER, often off): what perf-tools' funccount uses,
//    in the kernel, per CPU. It is global: taken at the top level under
//    perf-tools' lock (tracefs::Instance::top_level), everything restored.
//    It cannot count one process: not with -p.
//  - perf counters on kprobe events: the kernel counts each function's
//    kprobe hits, no ring buffer, no record per call (perf::Counters);
//    -p: counters in the process's threads (and what they start).
//  - the function tracer in the run's own instance, its records read raw
//    and counted by function address (resolved with kallsyms once, at each
//    report); -p: the instance's pid list.
//  - tracepoints (t:cat:event) and user functions (lib:func, uprobes):
//    perf counters on their event ids; more than kMaxCountedTracepoints
//    tracepoints are enabled in the run's own instance instead, their
//    records read raw and counted by event id (a perf counter's teardown
//    costs the kernel a synchronisation per tracepoint, 12 s for 360; the
//    instance's, under 0.1 s), exact but for events lost to a full buffer
//    (said); -p: the instance's pid list. Without instances: perf counters.
//
// The counting itself is session/counting.hpp's (shared with cachestat).
//
// Output as perf-tools' and bcc's: "FUNC COUNT" rows by ascending count,
// functions never hit left out, -t keeps the top N.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "session/counting.hpp"
#include "session/run.hpp"
#include "tracefs/top_level.hpp"
#include "util/result.hpp"
#include "session/entry.hpp"

namespace tracekit::funccount {

struct Options {
  std::string pattern;             // a glob (or -r regex), or a t:/lib: spec
  bool regex = false;              // -r
  std::optional<int> pid;          // -p
  std::optional<int> cpu;          // -c (bcc's)
  std::optional<double> duration;  // -d
  std::optional<double> interval;  // -i
  bool timestamp = false;          // -T
  std::optional<size_t> top;       // -t
};

// Which original a command line follows, for its output: bcc's funccount
// when it uses what only bcc's has (-p, -r, -c, a spec with a ':': t:, lib:,
// p::), perf-tools' otherwise (a kernel function glob, with -d, -i, -t, -T,
// which both or only perf-tools' have).
enum class Style { kPerfTools, kBcc };
Style style_of(const Options& o);

// The table: a "FUNC COUNT" line ("%-30s %8s" as perf-tools', "%-36s %8s"
// as bcc's), then the non-zero counts, ascending (ties by name), the last
// top of them with top. Pure.
std::string format_table(std::vector<std::pair<std::string, uint64_t>> counts,
                         std::optional<size_t> top, Style style = Style::kPerfTools);

// The header line, as the original of style_of(o) says it: perf-tools'
// ("Tracing "vfs*" for 5 seconds...") or bcc's ("Tracing 2 functions for
// "c:read"... Hit Ctrl-C to end.", functions being how many are counted).
// Pure.
std::string header_line(const Options& o, size_t functions = 0);

// The function profiler's engine, started: functions in the top level's
// set_ftrace_filter and function_profile_enabled on, under the lock at
// lock_path; each report sums trace_stat/function* over the CPUs and starts
// the counts again (with cpu, reads trace_stat/function<cpu> alone).
// Everything is restored when it is destroyed. Error: the lock is held
// (naming the holder), a write the kernel refused.
Result<std::unique_ptr<session::Engine>> start_profiler(
    const std::string& tracing_dir, const std::vector<std::string>& functions,
    std::optional<size_t> top, const std::string& lock_path = tracefs::kFtraceLock,
    std::optional<int> cpu = std::nullopt);

// Sets funccount's run up (session/entry.hpp): its counting engine started.
session::Outcome set_up(const Options& o);

}  // namespace tracekit::funccount
