// funcgraph: trace the graph of a kernel function's child calls with the
// function_graph tracer (perf-tools' funcgraph).
#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "family/functions/tracer.hpp"

namespace tracekit::tools {

session::Outcome funcgraph_main(int argc, char** argv) {
  functions::Options o;
  cli::Command cmd("funcgraph", "[-aCDhHPtT] [-m maxdepth] [-p PID] [-L TID] [-d secs] funcstring");
  functions::SharedOptions shared(cmd, o, functions::SharedOptions::Tool::kFuncgraph);
  cmd.example("funcgraph do_nanosleep", "trace do_nanosleep() and children")
      .example("funcgraph -m 3 vfs_read", "trace vfs_read() to 3 levels only")
      .example("funcgraph -a vfs_read", "include timestamps and process name")
      .example("funcgraph -p 198 vfs_read", "trace vfs_read() for PID 198 only")
      .example("funcgraph -d 1 vfs_read > out", "trace 1 sec, then write to file");
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
    .name = "funcgraph",
    .summary = "trace a kernel function's child calls as a graph",
    .main = funcgraph_main,
    .uses =
        {
            {"",
             {{"function_graph in a private instance where the kernel allows it (Linux 6.12+), "
               "else at the top level (perf-tools' lock)",
               {F::kFunctionGraph}}}},
            {"-T", {{"the funcgraph-tail option", {F::kFunctionGraph, F::kFuncgraphTail}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
