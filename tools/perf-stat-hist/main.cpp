// perf-stat-hist: a histogram of a tracepoint's field, counted in the
// kernel (perf-tools' perf-stat-hist).
#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "perf-stat-hist/perf_stat_hist.hpp"

namespace tracekit::tools {

session::Outcome perf_stat_hist_main(int argc, char** argv) {
  perf_stat_hist::Options o;
  std::string buckets, tracepoint;
  long power = 4, max = 1024 * 1024;
  int pid = 0;
  cli::Command cmd("perf-stat-hist",
                   "[-h] [-b buckets|-P power] [-m max] [-f filter] [-p PID] [-n name]\n"
                   "tracepoint variable [seconds]");
  cmd.option("b", &buckets, "buckets", "specify histogram bucket points")
      .option("P", &power, "power", "power-of (default is 4)")
      .option("m", &max, "max", "max value for power-of (default 1048576)")
      .option("f", &o.filter, "filter", "specify a filter (the kernel's syntax)")
      .option("p", &pid, "PID", "this process only (its threads, and what they start)")
      .option("n", &o.name, "name", "process name to match (or a glob: 'java*')")
      .required("tracepoint", &tracepoint, "category:event, as in available_events")
      .required("variable", &o.variable, "the field of the tracepoint to summarize")
      .positional("seconds", &o.duration, "seconds to trace (default: until Ctrl-C)")
      .example("perf-stat-hist syscalls:sys_enter_read count 5",
               "read() request histogram, 5 seconds")
      .example("perf-stat-hist syscalls:sys_exit_read ret 5", "read() return histogram, 5 seconds")
      .example("perf-stat-hist -P 10 syscalls:sys_exit_read ret 5", "... use power-of-10")
      .example("perf-stat-hist -P 2 -m 1024 syscalls:sys_exit_read ret 5",
               "... use power-of-2, max 1024")
      .example("perf-stat-hist -b \"10 50 100 500\" syscalls:sys_exit_read ret 5",
               "... histogram based on these bucket ranges")
      .example("perf-stat-hist -b 10 syscalls:sys_exit_read ret 5",
               "... bifurcate by the value 10 (lowest overhead)")
      .example("perf-stat-hist -f 'rwbs == \"WS\"' block:block_rq_complete nr_sector 5",
               "... synchronous writes histogram, 5 seconds")
      .example("perf-stat-hist -p 181 syscalls:sys_enter_read count",
               "PID 181's read() requests, until Ctrl-C");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (cmd.given("b") && cmd.given("P")) return cmd.usage_error("use either -b or -P");
  if (cmd.given("b") && cmd.given("m")) return cmd.usage_error("-m goes with -P's buckets, not -b");
  if (power < 2) return cmd.usage_error("-P power must be 2 or higher");
  if (max < 0) return cmd.usage_error("-m max must be 0 or more");
  if (cmd.given("b")) {
    auto edges = perf_stat_hist::parse_buckets(buckets);
    if (!edges) return cmd.usage_error(edges.error().message);
    o.edges = std::move(*edges);
  } else {
    o.power = power;
    o.edges = perf_stat_hist::power_buckets(power, max);
  }
  auto tp = perf_stat_hist::split_tracepoint(tracepoint);
  if (!tp) return cmd.usage_error(tp.error().message);
  o.system = tp->first;
  o.event = tp->second;
  if (auto c = cmd.positive_id("p", pid, "PID", &o.pid)) return *c;
  if (cmd.given("p") && cmd.given("n")) return cmd.usage_error("use either -p or -n");
  if (cmd.given("n") && (o.name.empty() || o.name.find_first_of("\"\\") != std::string::npos))
    return cmd.usage_error("-n needs a name, without quotes or backslashes");
  if (cmd.given("f") && o.filter.empty()) return cmd.usage_error("-f needs a filter");
  if (o.duration && !(*o.duration > 0)) return cmd.usage_error("seconds must be positive");
  return perf_stat_hist::set_up(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "perf-stat-hist",
    .summary = "histogram of a tracepoint's field, counted in the kernel",
    .main = perf_stat_hist_main,
    .uses =
        {
            {"",
             {{"perf counters on the tracepoint, one per bucket, filtered on the field",
               {F::kPerfEvents, F::kEventTracing}}}},
            {"-p PID",
             {{"the counters in the process's threads, inherited by what they start",
               {F::kPerfEvents, F::kEventTracing}}}},
            {"-n name",
             {{"a kernel filter on comm: == a name, ~ a glob",
               {F::kPerfEvents, F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
