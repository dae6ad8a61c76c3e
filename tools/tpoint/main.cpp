// tpoint: trace a tracepoint and print its events (perf-tools' tpoint).
#include <fnmatch.h>

#include <cerrno>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "family/events/tool.hpp"
#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "session/trace_session.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::tools {

namespace {

// tpoint -l [glob]: "category:event" lines, as available_events lists them;
// without syscall tracepoints, the syscalls:* events tpoint traces through
// raw_syscalls instead of the kernel's (none, or forced off).
// Why glob is not one fnmatch can take ("" when it is): fnmatch takes an
// unclosed '[' or a trailing '\\' as a glob that matches nothing, so "-l
// '['" listed nothing and exited 0, as if there were no tracepoints.
std::string glob_error(std::string_view glob) {
  for (size_t i = 0; i < glob.size(); ++i) {
    if (glob[i] == '\\') {
      if (++i == glob.size()) return "it ends with a lone '\\'";
    } else if (glob[i] == '[') {
      size_t j = i + 1;
      if (j < glob.size() && (glob[j] == '!' || glob[j] == '^')) ++j;
      if (j < glob.size() && glob[j] == ']') ++j;  // a first ']' is one of the set
      j = glob.find(']', j);
      if (j == std::string_view::npos) return "its '[' is not closed by a ']'";
      i = j;
    }
  }
  return "";
}

session::Outcome list(const std::string& dir, const std::string& glob) {
  auto text = read_file(dir + "/available_events");
  if (!text) return text.error();
  const bool raw = !kernel::Features::host().has(kernel::Feature::kSyscallTracepoints);
  const std::string syscalls_prefix = std::string(syscalls::kSystem) + ":";
  size_t listed = 0;
  auto print = [&](const std::string& l) {
    if (!glob.empty() && fnmatch(glob.c_str(), l.c_str(), 0) != 0) return;
    std::cout << l << "\n";
    ++listed;
  };
  for (auto line : split(*text, '\n')) {
    if (line.empty()) continue;
    std::string l(line);
    if (raw && l.rfind(syscalls_prefix, 0) == 0) continue;
    print(l);
  }
  if (raw)
    for (const std::string& event : syscalls::event_names()) print(syscalls_prefix + event);
  // As grep: a glob that matches nothing is said, and fails (exit 1).
  if (listed == 0 && !glob.empty())
    return Error{
            0, "no tracepoint matches '" + elide(glob) + "'", {}, "list them all with tpoint -l"};
  return cli::kExitOk;
}

}  // namespace

session::Outcome tpoint_main(int argc, char** argv) {
  events::ToolOptions o;
  o.ev.tool = "tpoint";
  bool list_events = false;
  cli::Command cmd("tpoint",
                   "[-hHsv] [-d secs] [-p PID] [-L TID] tracepoint [filter]\n"
                   "-l [glob]");
  events::SharedOptions shared(cmd, o, "tracepoint", "category:event (or the -l glob)");
  cmd.flag("l", &list_events, "list all tracepoints (matching glob)")
      .example("tpoint -l | grep open", "find tracepoints containing \"open\"")
      .example("tpoint syscalls:sys_enter_openat", "trace openat() syscall entry")
      .example("tpoint block:block_rq_issue", "trace block I/O issue")
      .example("tpoint -s block:block_rq_issue", "show kernel stacks")
      .example("tpoint -d 5 block:block_rq_insert", "buffered for 5 seconds, read once")
      .example("tpoint -p 185 syscalls:sys_enter_read", "PID 185's reads only")
      .example("tpoint block:block_rq_insert 'rwbs ~ \"*R*\"'", "reads only (a kernel filter)");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (auto code = shared.check(!list_events)) return *code;
  if (list_events && (!o.ev.filter.empty() || cmd.given("d") || o.ev.pid || o.ev.tid || o.view ||
                      o.ev.stacks || o.ev.headers))
    return cmd.usage_error("-l takes no other option, and one glob at most");
  if (list_events && !o.definition.empty()) {
    if (std::string why = glob_error(o.definition); !why.empty())
      return cmd.usage_error("invalid glob '" + elide(o.definition) + "': " + why);
  }
  if (!list_events && o.definition.find(':') == std::string::npos)
    return cmd.usage_error("tracepoint '" + elide(o.definition) + "' is not category:event");

  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  if (list_events) return list(*dir, o.definition);

  auto spec = probe::parse_spec("t:" + o.definition);
  if (!spec) return spec.error();
  probe::ExpandOptions eo;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) return targets.error();
  if (targets->empty())
    return Error{
            0, "tracepoint " + elide(o.definition) + " not found", {}, "list them with tpoint -l"};
  auto trace =
      session::TraceSession::create(*dir, "tpoint", *targets, /*function_tracer=*/false, std::cerr);
  if (!trace) return trace.error();
  return events::view_or_trace(std::move(*trace), o, o.definition);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "tpoint",
    .summary = "trace a tracepoint and print its events",
    .main = tpoint_main,
    .uses =
        {
            {"", kernel::event_ways()},
            {"syscalls:*", kernel::syscall_event_ways()},
            {"-p PID", kernel::event_pid_ways()},
            {"-s", {{"the stacktrace option", {F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
