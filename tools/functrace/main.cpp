// functrace: trace kernel function calls with the function tracer
// (perf-tools' functrace).
#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "family/functions/tracer.hpp"

namespace tracekit::tools {

session::Outcome functrace_main(int argc, char** argv) {
  functions::Options o;
  cli::Command cmd("functrace", "[-hH] [-p PID] [-L TID] [-d secs] funcstring");
  functions::SharedOptions shared(cmd, o, functions::SharedOptions::Tool::kFunctrace);
  cmd.example("functrace do_nanosleep", "trace the do_nanosleep() function")
      .example("functrace '*sleep'", "trace functions ending in \"sleep\"")
      .example("functrace -p 198 'vfs*'", "trace \"vfs*\" funcs for PID 198")
      .example("functrace 'tcp*' > out", "trace all \"tcp*\" funcs to out file")
      .example("functrace -d 1 'tcp*' > out", "trace 1 sec, then write out file");
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
    .name = "functrace",
    .summary = "trace kernel function calls (function tracer)",
    .main = functrace_main,
    .uses =
        {
            {"",
             {{"the function tracer in a private instance",
               {F::kInstances, F::kInstanceOptions, F::kFunctionTracer}},
              {"the function tracer at the top level (perf-tools' lock)", {F::kFunctionTracer}}}},
            {"-p PID / -L TID",
             {{"a pid list of the instance's own",
               {F::kInstances, F::kInstanceOptions, F::kInstanceFtracePid, F::kFunctionTracer}},
              {"the top level's pid list (perf-tools' lock)", {F::kFunctionTracer}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
