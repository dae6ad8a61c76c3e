// functrace: trace kernel function calls with the function tracer
// (perf-tools' functrace).
#include "cli/command.hpp"
#include "functions/tracer.hpp"
#include "tools.hpp"

namespace tracekit::tools {

int functrace_main(int argc, char** argv) {
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
