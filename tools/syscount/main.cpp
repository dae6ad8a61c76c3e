// syscount: count system calls by process or by syscall name, system-wide,
// for one process, or for a command (perf-tools' syscount).
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "syscount/syscount.hpp"

namespace tracekit::tools {

namespace {

// Where the command begins, as getopts sees it: the first argument that is
// neither an option nor an option's value, or the one after "--". argc when
// there is none.
int command_start(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--") return i + 1;
    if (a.size() < 2 || a[0] != '-') return i;
    if (a[1] == '-') continue;  // --help
    for (size_t j = 1; j < a.size(); ++j)
      if (a[j] == 'd' || a[j] == 'p' || a[j] == 't') {
        if (j + 1 == a.size()) ++i;  // the value is the next argument
        break;
      }
  }
  return argc;
}

std::optional<int> parse(int argc, char** argv, syscount::Options& o) {
  int pid = 0;
  double secs = 0;
  long top = 0;
  std::optional<std::string> command;
  cli::Command cmd("syscount", "[-chv] [-t top] {-p PID|-d seconds|command}");
  cmd.flag("c", &o.by_syscall, "show counts by syscall name")
      .flag("v", &o.verbose, "verbose: shows PID")
      .option("p", &pid, "PID", "trace this PID only")
      .option("d", &secs, "seconds", "duration of trace")
      .option("t", &top, "num", "show top number only")
      .positional("command", &command, "run and trace this command (and what it starts)")
      .example("syscount", "syscalls by process name")
      .example("syscount -c", "syscalls by syscall name")
      .example("syscount -d 5", "trace for 5 seconds")
      .example("syscount -cp 923", "syscall names for PID 923")
      .example("syscount -c ls", "syscall names for \"ls\"");
  // The command's own arguments are not ours: parse up to its name.
  const int start = command_start(argc, argv);
  const int ours = start < argc ? start + 1 : argc;
  if (auto code = cmd.parse(ours, argv)) return code;
  if (command) {
    o.command.push_back(*command);
    for (int i = ours; i < argc; ++i) o.command.push_back(argv[i]);
  }
  if (auto c = cmd.positive_id("p", pid, "PID", &o.pid)) return *c;
  if (auto c = cmd.positive_seconds("d", secs, &o.duration)) return *c;
  if (cmd.given("t")) {
    if (top <= 0) return cmd.usage_error("-t needs a positive number of rows");
    o.top = static_cast<size_t>(top);
  }
  if (cmd.given("p") + cmd.given("d") + command.has_value() > 1)
    return cmd.usage_error("pick one of {-p PID|-d seconds|command}");
  return std::nullopt;
}

}  // namespace

session::Outcome syscount_main(int argc, char** argv) {
  syscount::Options o;
  if (auto code = parse(argc, argv, o)) return *code;
  return syscount::set_up(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "syscount",
    .summary = "count system calls by process or by name",
    .main = syscount_main,
    .uses =
        {
            {"",
             {{"raw_syscalls:sys_enter read raw from a private instance, counted by id",
               {F::kEventTracing, F::kInstances}},
              {"raw_syscalls:sys_enter at the top level (perf-tools' lock), counted by id",
               {F::kEventTracing}}}},
            {"-p PID", kernel::event_pid_ways()},
            {"command",
             {{"set_event_pid following forks", {F::kSetEventPid, F::kEventFork}},
              {"every process traced, the command's descendants followed by sched_process_fork",
               {F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
