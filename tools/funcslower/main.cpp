// funcslower: show kernel function calls slower than a threshold, with the
// function_graph tracer's tracing_thresh (perf-tools' funcslower).
#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "family/functions/tracer.hpp"

namespace tracekit::tools {

session::Outcome funcslower_main(int argc, char** argv) {
  functions::Options o;
  cli::Command cmd("funcslower", "[-aChHPt] [-p PID] [-L TID] [-d secs] funcstring latency_us");
  functions::SharedOptions shared(cmd, o, functions::SharedOptions::Tool::kFuncslower);
  cmd.example("funcslower vfs_read 10000", "trace vfs_read() slower than 10 ms")
      .example("funcslower -P hrtimer_nanosleep 5000", "with process names & PIDs")
      .example("funcslower -d 5 -p 198 vfs_read 1000", "PID 198, 5 seconds buffered");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (auto code = shared.check()) return *code;
  return functions::trace(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "funcslower",
    .summary = "show kernel function calls slower than a threshold",
    .main = funcslower_main,
    .uses =
        {
            {"", {{"function_graph with tracing_thresh (perf-tools' lock)", {F::kFunctionGraph}}}},
            {"-p PID / -L TID",
             {{"a pid list of the trace array's own (the top level's under tracing_thresh)",
               {F::kFunctionGraph, F::kInstanceFtracePid}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
