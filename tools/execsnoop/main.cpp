// execsnoop: trace exec()s with the new process's PID, its parent's and its
// arguments (perf-tools' execsnoop).
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "execsnoop/execsnoop.hpp"
#include "probe/match.hpp"
#include "session/run.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, execsnoop::Options& o) {
  double secs = 0;
  std::optional<std::string> name;
  cli::Command cmd("execsnoop", "[-hrt] [-a argc] [-d secs] [name]");
  cmd.option("d", &secs, "seconds", "trace duration, and use buffers")
      .option("a", &o.max_args, "argc", "max args to show (default 8)")
      .flag("r", &o.reexecs, "include re-execs")
      .flag("t", &o.timestamps, "include time (seconds)")
      .positional("name", &name, "process name to match (REs allowed)")
      .example("execsnoop", "watch exec()s live (unbuffered)")
      .example("execsnoop -d 1", "trace 1 sec (buffered)")
      .example("execsnoop grep", "trace process names containing grep")
      .example("execsnoop 'udevd$'", "process names ending in \"udevd\"");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (o.max_args < 1 || o.max_args > execsnoop::kMaxArgs)
    return cmd.usage_error("-a takes 1 to " + std::to_string(execsnoop::kMaxArgs) + " arguments");
  o.name = name.value_or("");
  if (!o.name.empty())
    if (auto m = probe::Matcher::make(o.name, /*regex=*/true); !m)
      return cmd.usage_error(m.error().str());
  if (auto c = cmd.positive_seconds("d", secs, &o.buffered_secs)) return *c;
  return std::nullopt;
}

// perf-tools' header: "Tracing exec()s issued by process name "grep"",
// and how long.
std::string tracing(const execsnoop::Options& o) {
  std::ostringstream h;
  h << "Tracing exec()s";
  if (!o.name.empty()) h << " issued by process name \"" << o.name << "\"";
  return h.str();
}

}  // namespace

session::Outcome execsnoop_main(int argc, char** argv) {
  execsnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto snooper = execsnoop::Snooper::start(o, std::cout, std::cerr);
  if (!snooper) return snooper.error();
  return session::started(std::move(snooper), session::snoop(tracing(o), snooper->header(), o.buffered_secs));
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "execsnoop",
    .summary = "trace exec()s with their arguments and parent PIDs",
    .main = execsnoop_main,
    .uses =
        {
            {"",
             {{"sched_process_exec and sched_process_fork, arguments by kprobes on the exec "
               "syscall "
               "entries",
               {F::kKprobes, F::kEventTracing}},
              {"sched_process_exec and sched_process_fork, arguments by eprobes on "
               "sys_enter_execve(at)",
               {F::kEprobes, F::kSyscallTracepoints}},
              {"sched_process_exec and sched_process_fork, arguments by uprobes on the C library's "
               "exec functions (programs without it: /proc/PID/cmdline)",
               {F::kUprobes, F::kEventTracing}},
              {"sched_process_exec and sched_process_fork, arguments from /proc/PID/cmdline while "
               "the process lives",
               {F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
