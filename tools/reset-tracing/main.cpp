// reset-tracing: remove what killed tracekit runs left in tracefs (and a
// stale ftrace lock); with -f, also what live runs hold, the ftrace lock
// whoever holds it, and the global ftrace state perf-tools' reset-ftrace
// resets.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/top_level.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::tools {

namespace {

struct Options {
  bool force = false;
  bool quiet = false;
};

std::optional<int> parse(int argc, char** argv, Options& o) {
  // Run as reset-ftrace (perf-tools' name, which users type: a link of its
  // own), the usage speaks perf-tools' words; what it does is the same.
  std::string_view self = argv[0];
  self.remove_prefix(self.rfind('/') == std::string_view::npos ? 0 : self.rfind('/') + 1);
  if (self == "reset-ftrace") {
    cli::Command cmd("reset-ftrace", "[-fhq]");
    cmd.flag("f,force", &o.force,
             "force: delete ftrace lock file; also end live runs' tracing\n"
             "and reset global ftrace state (current_tracer, filters, options)")
        .flag("q,quiet", &o.quiet, "quiet: reset, but say nothing")
        .example("reset-ftrace", "remove what killed ftrace sessions left behind")
        .example("reset-ftrace -f", "also disable active ftrace sessions");
    return cmd.parse(argc, argv);
  }
  cli::Command cmd("reset-tracing", "[-fhq]");
  cmd.flag("f,force", &o.force,
           "also remove what live runs hold, and reset global ftrace\n"
           "state (current_tracer, function filters, tracing_thresh, options) like reset-ftrace")
      .flag("q,quiet", &o.quiet, "say nothing unless something fails")
      .example("reset-tracing", "remove what killed tracekit runs left behind")
      .example("reset-tracing -f", "also end live runs' tracing, reset ftrace state")
      .example("reset-tracing -q", "the same as the first, silently");
  return cmd.parse(argc, argv);
}

// Prints one line per item; failures on stderr. Returns the failure count.
size_t report(const tracefs::Cleanup& c, const char* done_verb, const char* failed_verb,
              bool quiet) {
  if (!quiet)
    for (const auto& r : c.removed) std::cout << done_verb << " " << r << "\n";
  for (const auto& f : c.failed)
    std::cerr << "reset-tracing: cannot " << failed_verb << " " << f << "\n";
  return c.failed.size();
}

}  // namespace

session::Outcome reset_tracing_main(int argc, char** argv) {
  Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  if (access(dir->c_str(), W_OK) != 0)
    return Error::from_errno("cannot change tracefs at " + *dir, {}, "run as root");

  if (!o.quiet)
    std::cout << "Removing what " << (o.force ? "" : "dead ") << "tracekit runs left in " << *dir
              << (o.force ? " (live ones too: -f)" : "") << "...\n";
  auto left = tracefs::remove_leftovers(*dir, o.force);
  size_t failed = report(left, "removed", "remove", o.quiet);
  size_t removed = left.removed.size(), reset = 0;
  // perf-tools' lock: left by a killed run of ours (or theirs), or with -f
  // whoever holds it, as reset-ftrace -f does.
  if (auto lock = tracefs::remove_lock(*dir, o.force); !lock) {
    std::cerr << "reset-tracing: " << lock.error().str() << "\n";
    ++failed;
  } else if (!lock->empty()) {
    if (!o.quiet) std::cout << "removed ftrace lock " << *lock << "\n";
    ++removed;
  }
  if (o.force) {
    if (!o.quiet) std::cout << "Resetting global ftrace state...\n";
    auto global = tracefs::reset_global(*dir);
    failed += report(global, "reset", "reset", o.quiet);
    reset = global.removed.size();
  }
  if (!o.quiet) {
    std::string done;
    if (removed) done += std::to_string(removed) + " removed";
    if (reset) done += (done.empty() ? "" : ", ") + std::to_string(reset) + " reset";
    if (failed) done += (done.empty() ? "" : ", ") + std::to_string(failed) + " failed";
    std::cout << "Done: " << (done.empty() ? "nothing to do" : done) << ".\n";
  }
  return failed == 0 ? cli::kExitOk : cli::kExitFailure;
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "reset-tracing",
    .summary = "remove what killed runs left in tracefs",
    .main = reset_tracing_main,
    .uses =
        {
            {"", {{"tracefs", {F::kTracefs}}, {"debugfs's tracing", {F::kDebugfsTracing}}}},
        },
    // perf-tools' name, which users type (a link of its own).
    .aliases = {"reset-ftrace"},
}};
}  // namespace
}  // namespace tracekit::tools
