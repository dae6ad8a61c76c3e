// opensnoop: trace open() and openat() with the file name and the file
// descriptor returned (perf-tools' opensnoop).
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "opensnoop/opensnoop.hpp"
#include "probe/match.hpp"
#include "session/run.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, opensnoop::Options& o) {
  int pid = 0, tid = 0;
  double secs = 0;
  std::optional<std::string> file;
  cli::Command cmd("opensnoop", "[-htx] [-d secs] [-p PID] [-L TID] [-n name] [filename]");
  cmd.option("d", &secs, "seconds", "trace duration, and use buffers")
      .option("n", &o.name, "name", "process name to match on open (a regex)")
      .option("p", &pid, "PID", "PID to match on open")
      .option("L", &tid, "TID", "thread ID to match on open")
      .flag("t", &o.timestamps, "include time (seconds)")
      .flag("x", &o.failed_only, "only show failed opens")
      .positional("filename", &file, "match filename (partials, REs, ok)")
      .example("opensnoop", "watch open()s live (unbuffered)")
      .example("opensnoop -d 1", "trace 1 sec (buffered)")
      .example("opensnoop -p 181", "trace open()s by PID 181 only")
      .example("opensnoop -x", "failed open()s only")
      .example("opensnoop conf", "trace filenames containing \"conf\"")
      .example("opensnoop 'log$'", "filenames ending in \"log\"");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto c = cmd.positive_id("p", pid, "PID", &o.pid)) return *c;
  if (auto c = cmd.positive_id("L", tid, "TID", &o.tid)) return *c;
  if (cmd.given("p") + cmd.given("L") + cmd.given("n") > 1)
    return cmd.usage_error("use at most one of -p, -n, -L");
  if (cmd.given("n") && o.name.empty()) return cmd.usage_error("-n needs a name");
  o.filename = file.value_or("");
  for (const auto* re : {&o.name, &o.filename})
    if (!re->empty())
      if (auto m = probe::Matcher::make(*re, /*regex=*/true); !m)
        return cmd.usage_error(m.error().str());
  if (auto c = cmd.positive_seconds("d", secs, &o.buffered_secs)) return *c;
  return std::nullopt;
}

// perf-tools' header: "Tracing open()s issued by PID 181 for filenames
// containing "conf"", and how long.
std::string tracing(const opensnoop::Options& o) {
  std::ostringstream h;
  h << "Tracing open()s";
  if (o.pid) h << " issued by PID " << *o.pid;
  if (o.tid) h << " issued by TID " << *o.tid;
  if (!o.name.empty()) h << " issued by process name \"" << o.name << "\"";
  if (!o.filename.empty()) h << " for filenames containing \"" << o.filename << "\"";
  return h.str();
}

}  // namespace

session::Outcome opensnoop_main(int argc, char** argv) {
  opensnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto snooper = opensnoop::Snooper::start(o, std::cout, std::cerr);
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
    .name = "opensnoop",
    .summary = "trace open()s with file names and descriptors",
    .main = opensnoop_main,
    .uses =
        {
            {"",
             {{"file names by kprobes on the syscall entries, descriptors from sys_exit "
               "tracepoints",
               {F::kKprobes, F::kSyscallTracepoints}},
              {"file names by eprobes on sys_enter tracepoints, descriptors from sys_exit "
               "tracepoints",
               {F::kEprobes, F::kSyscallTracepoints}},
              {"file names by uprobes on the C library's open wrappers (misses opens without it), "
               "descriptors from sys_exit tracepoints",
               {F::kUprobes, F::kSyscallTracepoints}},
              {"file names by kprobes on the syscall entries, descriptors from "
               "raw_syscalls:sys_exit",
               {F::kKprobes, F::kEventTracing}},
              {"file names by uprobes on the C library's open wrappers (misses opens without it), "
               "descriptors from raw_syscalls:sys_exit",
               {F::kUprobes, F::kEventTracing}}}},
            {"-p PID", kernel::event_pid_ways()},
        },
}};
}  // namespace
}  // namespace tracekit::tools
