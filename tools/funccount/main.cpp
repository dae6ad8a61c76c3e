// funccount: count kernel function calls (and tracepoint and user function
// hits), in the kernel (perf-tools' and bcc's funccount).
#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "funccount/funccount.hpp"
#include "probe/spec.hpp"

namespace tracekit::tools {

session::Outcome funccount_main(int argc, char** argv) {
  funccount::Options o;
  int pid = 0, top = 0, cpu = 0;
  double secs = 0, interval = 0;
  cli::Command cmd("funccount",
                   "[-hT] [-i secs] [-d secs] [-t top] [-p PID] [-c CPU] [-r] pattern");
  cmd.option("d", &secs, "seconds", "total duration of trace")
      .option("i", &interval, "seconds", "interval summary")
      .option("p", &pid, "PID", "count this process only (its threads, and what they start)")
      .option("c", &cpu, "CPU", "count on this CPU only")
      .flag("r", &o.regex, "pattern is a regular expression")
      .option("t", &top, "top", "show top num entries only")
      .flag("T", &o.timestamp, "include timestamp on output")
      .required("pattern", &o.pattern,
                "kernel functions (* globs), t:category:event, lib:function, p::function")
      .example("funccount 'vfs*'", "trace all funcs that match \"vfs*\"")
      .example("funccount -d 5 'tcp*'", "trace \"tcp*\" funcs for 5 seconds")
      .example("funccount -t 10 'ext3*'", "show top 10 \"ext3*\" funcs")
      .example("funccount -i 1 'ext3*'", "summary every 1 second")
      .example("funccount -i 1 -d 5 'ext3*'", "5 x 1 second summaries")
      .example("funccount -p 185 -r '^vfs_(read|write)$'", "PID 185's reads and writes")
      .example("funccount t:syscalls:sys_enter_*", "count each syscall's entries")
      .example("funccount c:malloc", "count the C library's malloc() calls");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (auto c = cmd.positive_seconds("d", secs, &o.duration)) return *c;
  if (auto c = cmd.positive_seconds("i", interval, &o.interval)) return *c;
  if (auto c = cmd.positive_id("p", pid, "PID", &o.pid)) return *c;
  if (cmd.given("c")) {
    if (cpu < 0) return cmd.usage_error("invalid CPU " + std::to_string(cpu));
    o.cpu = cpu;
  }
  if (cmd.given("t")) {
    if (top <= 0) return cmd.usage_error("-t needs a positive number");
    o.top = static_cast<size_t>(top);
  }
  if (o.timestamp && !o.interval) return cmd.usage_error("-T goes with -i");
  // A malformed spec or a regex that does not compile (an empty pattern
  // too) is a bad command line, as in stackcount.
  auto spec = probe::parse_spec(o.pattern);
  if (!spec) return cmd.usage_error(spec.error().str());
  if (auto ok = probe::check_patterns(*spec, o.regex); !ok)
    return cmd.usage_error(ok.error().str());
  return funccount::set_up(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "funccount",
    .summary = "count kernel function calls (or events), in the kernel",
    .main = funccount_main,
    .uses =
        {
            {"kernel functions",
             {{"the function profiler (perf-tools' lock)", {F::kFunctionProfiler}},
              {"perf counters on kprobes", {F::kKprobes, F::kPerfEvents}},
              {"the function tracer in a private instance, counted by address",
               {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
              {"the function tracer at the top level (perf-tools' lock), counted by address",
               {F::kFunctionTracer}}}},
            // -p: kernel functions need kprobes (or the function tracer); events
            // (t:, lib:) are counted per thread by perf as without it.
            {"-p PID, kernel functions",
             {{"perf counters on kprobes in the process's threads", {F::kKprobes, F::kPerfEvents}},
              {"the function tracer with a pid list", {F::kFunctionTracer}}}},
            {"-p PID, t: and lib:",
             {{"perf counters on the events in the process's threads", {F::kPerfEvents}}}},
            {"t:, lib: (tracepoints, uprobes)",
             {{"perf counters on the events", {F::kPerfEvents}}}},
            {"more than 4 tracepoints",
             {{"the events in a private instance, counted by id",
               {F::kInstances, F::kEventTracing}},
              {"perf counters on the events", {F::kPerfEvents}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
