// killsnoop: trace kill(), tkill() and tgkill() with the sender, the
// target, the signal and the return value (perf-tools' killsnoop).
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "killsnoop/killsnoop.hpp"
#include "probe/match.hpp"
#include "session/run.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, killsnoop::Options& o) {
  int pid = 0;
  double secs = 0;
  cli::Command cmd("killsnoop", "[-hst] [-d secs] [-p PID] [-n name]");
  cmd.option("d", &secs, "seconds", "trace duration, and use buffers")
      .option("n", &o.name, "name", "process name to match (a regex)")
      .option("p", &pid, "PID", "PID to match on kill issue (the target)")
      .flag("t", &o.timestamps, "include time (seconds)")
      .flag("s", &o.signal_names, "human readable signal names")
      .example("killsnoop", "watch kill()s live (unbuffered)")
      .example("killsnoop -d 1", "trace 1 sec (buffered)")
      .example("killsnoop -p 181", "trace kill()s issued to PID 181 only");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto c = cmd.positive_id("p", pid, "PID", &o.pid)) return *c;
  if (cmd.given("p") && cmd.given("n")) return cmd.usage_error("use either -p or -n");
  if (cmd.given("n") && o.name.empty()) return cmd.usage_error("-n needs a name");
  if (!o.name.empty())
    if (auto m = probe::Matcher::make(o.name, /*regex=*/true); !m)
      return cmd.usage_error(m.error().str());
  if (auto c = cmd.positive_seconds("d", secs, &o.buffered_secs)) return *c;
  return std::nullopt;
}

// perf-tools' header: "Tracing kill()s issued to PID 181", and how long.
std::string tracing(const killsnoop::Options& o) {
  std::ostringstream h;
  h << "Tracing kill()s";
  if (o.pid) h << " issued to PID " << *o.pid;
  if (!o.name.empty()) h << " issued by process name \"" << o.name << "\"";
  return h.str();
}

}  // namespace

session::Outcome killsnoop_main(int argc, char** argv) {
  killsnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto snooper = killsnoop::Snooper::start(o, std::cout, std::cerr);
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
    .name = "killsnoop",
    .summary = "trace kill()s, tkill()s and tgkill()s with signals and results",
    .main = killsnoop_main,
    .uses =
        {
            {"",
             {{"sys_enter/sys_exit tracepoints of kill, tkill and tgkill",
               {F::kSyscallTracepoints}},
              {"raw_syscalls with an id filter, the arguments from args[]", {F::kEventTracing}}}},
            {"-p PID",
             {{"a kernel filter on the sys_enter tracepoints' target", {F::kSyscallTracepoints}},
              {"checked in user space (raw_syscalls' args cannot be filtered)",
               {F::kEventTracing}}}},
            {"-n name",
             {{"a kernel filter on comm for a plain name, else the regex checked in user space",
               {F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
