// What tpoint, kprobe and uprobe share around their probes: the options
// (-d -p -L -H -s -v, the filter), -v (the events' format files), and the
// run: the printer on the session, perf-tools' header and "Ending tracing...".
#pragma once

#include <optional>
#include <string>

#include "cli/command.hpp"
#include "family/events/printer.hpp"
#include "session/entry.hpp"
#include "session/trace_session.hpp"
#include "util/result.hpp"

namespace tracekit::events {

struct ToolOptions {
  Options ev;
  std::optional<double> duration;  // -d
  bool view = false;               // -v
  std::string definition;          // the tracepoint or probe definition
};

// Declares the shared options on cmd and the positionals "name" and
// "filter"; check() validates them after cmd.parse() succeeded.
class SharedOptions {
 public:
  // What -s shows: kernel stacks (tpoint, kprobe) or user stacks (uprobe).
  enum class Stacks { kKernel, kUser };
  SharedOptions(cli::Command& cmd, ToolOptions& o, const std::string& name,
                const std::string& name_help, Stacks stacks = Stacks::kKernel);
  // nullopt: go on; else the exit code of a usage error. definition_required:
  // false when another option (-l) stands in for it.
  std::optional<int> check(bool definition_required = true);
  bool definition_given() const { return definition_.has_value(); }

 private:
  cli::Command& cmd_;
  ToolOptions& o_;
  std::string name_;
  int pid_ = 0, tid_ = 0;
  double secs_ = 0;
  std::optional<std::string> definition_, filter_;
};

// -v: prints the format file of every event of the session's probes. Otherwise traces
// them under perf-tools' header: "Tracing WHAT (DETAIL). Ctrl-C to end."
// ("(DETAIL)" only when detail is not empty), or "Tracing WHAT for SECS
// seconds (buffered)..." with -d; then the events, then "Ending tracing...".
// Returns the exit code (errors are printed, "TOOL: ...").
session::Outcome view_or_trace(session::TraceSession trace, const ToolOptions& o, const std::string& what,
                  const std::string& detail = "");


}  // namespace tracekit::events
