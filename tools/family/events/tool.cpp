#include "family/events/tool.hpp"

#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/signals.hpp"
#include "session/run.hpp"
#include "util/strings.hpp"

namespace tracekit::events {

SharedOptions::SharedOptions(cli::Command& cmd, ToolOptions& o, const std::string& name,
                             const std::string& name_help, Stacks stacks)
    : cmd_(cmd), o_(o), name_(name) {
  cmd.option("d", &secs_, "seconds", "trace duration, and use buffers")
      .option("p", &pid_, "PID", "PID to match on events (its threads, later ones too)")
      .option("L", &tid_, "TID", "thread ID to match on events")
      .flag("v", &o.view, "view format file (don't trace)")
      .flag("H", &o.ev.headers, "include column headers");
  if (stacks == Stacks::kUser)
    cmd.flag("s", &o.ev.user_stacks, "show user stack traces");
  else
    cmd.flag("s", &o.ev.stacks, "show kernel stack traces");
  cmd.positional(name, &definition_, name_help)
      .positional("filter", &filter_, "a filter on the event's fields, as the kernel takes it");
}

std::optional<int> SharedOptions::check(bool definition_required) {
  if (definition_required && !definition_)
    return cmd_.usage_error("missing required argument '" + name_ + "'");
  o_.definition = definition_.value_or("");
  o_.ev.filter = filter_.value_or("");
  if (auto c = cmd_.positive_id("p", pid_, "PID", &o_.ev.pid)) return c;
  if (auto c = cmd_.positive_id("L", tid_, "TID", &o_.ev.tid)) return c;
  if (o_.ev.pid && o_.ev.tid) return cmd_.usage_error("use either -p or -L");
  if (auto c = cmd_.positive_seconds("d", secs_, &o_.duration)) return c;
  o_.ev.buffered = o_.duration.has_value();
  if (o_.view && (o_.duration || o_.ev.stacks || o_.ev.user_stacks || o_.ev.pid || o_.ev.tid || !o_.ev.filter.empty()))
    return cmd_.usage_error("-v shows the format only: use it alone");
  return std::nullopt;
}

session::Outcome view_or_trace(session::TraceSession trace, const ToolOptions& o, const std::string& what,
                  const std::string& detail) {
  if (o.view) {
    for (const auto& e : trace.probes().events()) {
      auto format =
          read_file(trace.tracing_dir() + "/events/" + e.system + "/" + e.event + "/format");
      if (!format) return format.error();
      std::cout << *format;
    }
    return cli::kExitOk;
  }
  auto printer = Printer::start(std::move(trace), o.ev, std::cout, std::cerr);
  if (!printer) return printer.error();
  session::RunOptions r;
  std::ostringstream h;
  if (o.duration)
    h << "Tracing " << what << " for " << *o.duration << " seconds (buffered)...\n";
  else
    h << "Tracing " << what << (detail.empty() ? "" : " (" + detail + ")") << ". Ctrl-C to end.\n";
  r.header = h.str();
  if (o.ev.headers && !o.duration) r.header += printer->header();
  r.duration = o.duration;
  r.buffered = o.ev.buffered;
  r.prints_events = true;
  r.after_report = "\nEnding tracing...\n";
  return session::started(std::move(printer), r);
}

}  // namespace tracekit::events
