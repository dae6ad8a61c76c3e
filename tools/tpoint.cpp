// tpoint: trace a tracepoint and print its events (perf-tools' tpoint).
#include <fnmatch.h>

#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "events/printer.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "stacks/probes.hpp"
#include "tools.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::tools {

namespace {

struct TpointOptions {
  events::Options ev;
  std::optional<double> duration;  // -d
  bool list = false;               // -l
  bool view = false;               // -v
  std::string tracepoint;          // or the -l glob
};

std::optional<int> parse(int argc, char** argv, TpointOptions& o) {
  int pid = 0, tid = 0;
  double secs = 0;
  std::optional<std::string> tracepoint, filter;
  cli::Command cmd("tpoint",
                   "[-hHsv] [-d secs] [-p PID] [-L TID] tracepoint [filter]\n"
                   "-l [glob]");
  cmd.option("d", &secs, "seconds", "trace duration, and use buffers")
      .option("p", &pid, "PID", "PID to match on events (its threads, later ones too)")
      .option("L", &tid, "TID", "thread ID to match on events")
      .flag("v", &o.view, "view format file (don't trace)")
      .flag("H", &o.ev.headers, "include column headers")
      .flag("l", &o.list, "list all tracepoints (matching glob)")
      .flag("s", &o.ev.stacks, "show kernel stack traces")
      .positional("tracepoint", &tracepoint, "category:event (or the -l glob)")
      .positional("filter", &filter, "a filter on the event's fields, as the kernel takes it")
      .example("tpoint -l | grep open", "find tracepoints containing \"open\"")
      .example("tpoint syscalls:sys_enter_openat", "trace openat() syscall entry")
      .example("tpoint block:block_rq_issue", "trace block I/O issue")
      .example("tpoint -s block:block_rq_issue", "show kernel stacks")
      .example("tpoint -d 5 block:block_rq_insert", "buffered for 5 seconds, read once")
      .example("tpoint -p 185 syscalls:sys_enter_read", "PID 185's reads only")
      .example("tpoint block:block_rq_insert 'rwbs ~ \"*R*\"'", "reads only (a kernel filter)");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (o.list) {
    if (filter || cmd.given("d") || cmd.given("p") || cmd.given("L") || o.view || o.ev.stacks)
      return cmd.usage_error("-l takes no other option, and one glob at most");
    o.tracepoint = tracepoint.value_or("");
    return std::nullopt;
  }
  if (!tracepoint) return cmd.usage_error("missing required argument 'tracepoint'");
  o.tracepoint = *tracepoint;
  if (o.tracepoint.find(':') == std::string::npos)
    return cmd.usage_error("tracepoint '" + o.tracepoint + "' is not category:event");
  o.ev.filter = filter.value_or("");
  if (cmd.given("p")) {
    if (pid <= 0) return cmd.usage_error("invalid PID " + std::to_string(pid));
    o.ev.pid = pid;
  }
  if (cmd.given("L")) {
    if (tid <= 0) return cmd.usage_error("invalid TID " + std::to_string(tid));
    o.ev.tid = tid;
  }
  if (o.ev.pid && o.ev.tid) return cmd.usage_error("use either -p or -L");
  if (cmd.given("d")) {
    if (!(secs > 0)) return cmd.usage_error("-d needs a positive number of seconds");
    o.duration = secs;
    o.ev.buffered = true;
  }
  if (o.view && (o.duration || o.ev.stacks || o.ev.pid || o.ev.tid || !o.ev.filter.empty()))
    return cmd.usage_error("-v shows the format only: use it alone");
  return std::nullopt;
}

// tpoint -l [glob]: "category:event" lines, as available_events lists them.
int list(const std::string& dir, const std::string& glob) {
  auto text = read_file(dir + "/available_events");
  if (!text) {
    std::cerr << "tpoint: " << text.error().str() << "\n";
    return cli::kExitFailure;
  }
  for (auto line : split(*text, '\n')) {
    if (line.empty()) continue;
    std::string l(line);
    if (glob.empty() || fnmatch(glob.c_str(), l.c_str(), 0) == 0) std::cout << l << "\n";
  }
  return cli::kExitOk;
}

}  // namespace

int tpoint_main(int argc, char** argv) {
  TpointOptions o;
  o.ev.tool = "tpoint";
  if (auto code = parse(argc, argv, o)) return *code;

  cli::install_stop_handlers();
  auto fail = [](const Error& e) {
    std::cerr << "tpoint: " << e.str() << "\n";
    return cli::kExitFailure;
  };
  auto dir = tracefs::tracing_dir();
  if (!dir) return fail(dir.error());
  if (o.list) return list(*dir, o.tracepoint);

  auto spec = probe::parse_spec("t:" + o.tracepoint);
  if (!spec) return fail(spec.error());
  probe::ExpandOptions eo;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) {
    if (targets.error().err == EINTR && cli::stop_requested()) return cli::kExitOk;
    return fail(targets.error());
  }
  if (targets->empty())
    return fail(Error{ENOENT, "tracepoint " + o.tracepoint + " not found", {},
                      "list them with tpoint -l"});
  if (o.view) {
    for (const auto& t : *targets) {
      auto format = read_file(*dir + "/events/" + t.system + "/" + t.event + "/format");
      if (!format) return fail(format.error());
      std::cout << *format;
    }
    return cli::kExitOk;
  }

  if (auto st = tracefs::sweep_dead_runs(*dir, "tpoint", std::cerr, cli::stop_requested); !st) {
    if (st.error().err == EINTR && cli::stop_requested()) return cli::kExitOk;
    return fail(st.error());
  }
  auto probes = stacks::Probes::create(*dir, *targets, /*function_tracer=*/false);
  if (!probes) return fail(probes.error());
  auto printer = events::Printer::start(*dir, std::move(*probes), o.ev, std::cout, std::cerr);
  if (!printer) {
    if (printer.error().err == EINTR && cli::stop_requested()) return cli::kExitOk;
    return fail(printer.error());
  }

  session::RunOptions r;
  std::ostringstream h;
  if (o.duration)
    h << "Tracing " << o.tracepoint << " for " << *o.duration << " seconds (buffered)...\n";
  else
    h << "Tracing " << o.tracepoint << ". Ctrl-C to end.\n";
  if (o.ev.headers && !o.duration) h << printer->header();
  r.header = h.str();
  r.duration = o.duration;
  r.buffered = o.ev.buffered;
  r.prints_events = true;
  r.after_report = "\nEnding tracing...\n";
  return session::run(*printer, r);
}

}  // namespace tracekit::tools
