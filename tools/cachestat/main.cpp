// cachestat: page cache hits, misses and dirties per interval, counted in
// the kernel (perf-tools' cachestat).
#include "cachestat/cachestat.hpp"
#include "cli/command.hpp"
#include "session/tool_table.hpp"

namespace tracekit::tools {

session::Outcome cachestat_main(int argc, char** argv) {
  cachestat::Options o;
  std::optional<double> interval;
  cli::Command cmd("cachestat", "[-Dht] [interval]");
  cmd.flag("D", &o.debug, "print debug counters")
      .flag("t", &o.timestamp, "include timestamp")
      .positional("interval", &interval, "output interval in secs (default 1)")
      .example("cachestat", "show stats every second")
      .example("cachestat 5", "show stats every 5 seconds");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (interval) {
    if (!(*interval > 0)) return cmd.usage_error("interval needs a positive number of seconds");
    o.interval = *interval;
  }
  return cachestat::set_up(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "cachestat",
    .summary = "page cache hits and misses per interval",
    .main = cachestat_main,
    .uses =
        {
            {"",
             {{"the function profiler (perf-tools' lock) on the page cache functions",
               {F::kFunctionProfiler}},
              {"perf counters on kprobes on the page cache functions",
               {F::kKprobes, F::kPerfEvents}},
              {"the function tracer in a private instance, counted by address",
               {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
              {"the function tracer at the top level (perf-tools' lock), counted by address",
               {F::kFunctionTracer}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
