// stacksnoop: print the kernel stack trace of every event.
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "stacksnoop/stacksnoop.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, stacksnoop::Options& o) {
  int pid = 0;
  double secs = 0;
  cli::Command cmd("stacksnoop", "[-h] [-p PID] [-s] [-v] [-d SECS] spec");
  cmd.option("p,pid", &pid, "PID", "trace this PID only (filtered in the kernel)")
      .flag("s,offset", &o.offset, "show address offsets")
      .flag("v,verbose", &o.verbose, "print more fields: COMM, PID, CPU")
      .option("d,duration", &secs, "SECS",
              "buffered: trace SECS seconds into the kernel buffer, then print once")
      .required("spec", &o.spec, "func, p::func, t:cat:event, lib:func (see stackcount)")
      .example("stacksnoop ext4_sync_fs", "print kernel stack traces for ext4_sync_fs")
      .example("stacksnoop -s ext4_sync_fs", "... also show symbol offsets")
      .example("stacksnoop -v ext4_sync_fs", "... show extra columns")
      .example("stacksnoop -p 185 ext4_sync_fs", "... only when PID 185 is on-CPU")
      .example("stacksnoop -d 5 t:block:block_rq_issue", "buffered for 5 seconds, read once");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto c = cmd.positive_id("pid", pid, "PID", &o.pid)) return *c;
  auto spec = probe::parse_spec(o.spec);
  if (!spec) return cmd.usage_error(spec.error().str());
  if (auto ok = probe::check_patterns(*spec, false); !ok) return cmd.usage_error(ok.error().str());
  if (cmd.given("duration")) {
    if (!(secs > 0)) return cmd.usage_error("-d needs a positive number of seconds");
    o.buffered_secs = secs;
  }
  return std::nullopt;
}

}  // namespace

session::Outcome stacksnoop_main(int argc, char** argv) {
  stacksnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto snooper = stacksnoop::Snooper::start(o, std::cout, std::cerr);
  if (!snooper) return snooper.error();
  session::RunOptions r;
  r.prints_events = true;
  if (o.buffered_secs) {
    std::ostringstream h;
    h << "Tracing \"" << o.spec << "\" for " << *o.buffered_secs << " seconds (buffered)...\n";
    r.header = h.str();
    r.buffered = true;
    r.duration = o.buffered_secs;
    r.poll_ms = 1000;
  } else {
    r.header = snooper->header();
  }
  return session::started(std::move(snooper), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
const session::RegisterTool kTool{{
    .name = "stacksnoop",
    .summary = "print the kernel stack of every event",
    .main = stacksnoop_main,
    .uses =
        {
            {"tracepoints", kernel::tracepoint_stack_ways()},
            {"kernel functions", kernel::kernel_function_stack_ways()},
        },
}};
}  // namespace
}  // namespace tracekit::tools
