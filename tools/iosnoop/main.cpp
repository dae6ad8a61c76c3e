// iosnoop: trace block device I/O with its latency (perf-tools' iosnoop).
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "family/block/event.hpp"
#include "iosnoop/iosnoop.hpp"
#include "probe/match.hpp"
#include "session/run.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, iosnoop::Options& o) {
  int pid = 0;
  std::optional<double> duration;
  cli::Command cmd("iosnoop", "[-hQst] [-d device] [-i iotype] [-p PID] [-n name] [duration]");
  cmd.option("d", &o.trace.device, "device", "device string (eg, \"202,1\", or a name: \"loop0\")")
      .option("i", &o.trace.iotype, "iotype", "match type (eg, '*R*' for all reads)")
      .option("n", &o.name, "name", "process name to match on I/O issue (a regex)")
      .option("p", &pid, "PID", "PID to match on I/O issue")
      .flag("Q", &o.trace.queue, "use queue insert as start time")
      .flag("s", &o.start_times, "include start time of I/O (s)")
      .flag("t", &o.end_times, "include completion time of I/O (s)")
      .positional("duration", &duration, "duration seconds, and use buffers")
      .example("iosnoop", "watch block I/O live (unbuffered)")
      .example("iosnoop 1", "trace 1 sec (buffered)")
      .example("iosnoop -Q", "include queueing time in LATms")
      .example("iosnoop -ts", "include start and end timestamps")
      .example("iosnoop -i '*R*'", "trace reads")
      .example("iosnoop -d loop0", "trace loop0 only")
      .example("iosnoop -p 91", "show I/O issued when PID 91 is on-CPU")
      .example("iosnoop -Qp 91", "show I/O queued by PID 91, queue time");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto c = cmd.positive_id("p", pid, "PID", &o.trace.pid)) return *c;
  if (cmd.given("p") && cmd.given("n")) return cmd.usage_error("use either -p or -n");
  if (cmd.given("n") && o.name.empty()) return cmd.usage_error("-n needs a name");
  if (!o.name.empty())
    if (auto m = probe::Matcher::make(o.name, /*regex=*/true); !m)
      return cmd.usage_error(m.error().str());
  if (cmd.given("i"))
    if (auto f = block::iotype_filter(o.trace.iotype); !f) return cmd.usage_error(f.error().str());
  if (cmd.given("d") && o.trace.device.empty()) return cmd.usage_error("-d needs a device");
  if (duration && !(*duration > 0))
    return cmd.usage_error("duration must be a positive number of seconds");
  o.duration = duration;
  return std::nullopt;
}

// perf-tools' header: "Tracing block I/O issued by PID 91", and how long.
std::string tracing(const iosnoop::Options& o) {
  std::ostringstream h;
  h << "Tracing block I/O";
  if (o.trace.pid) h << " issued by PID " << *o.trace.pid;
  if (!o.name.empty()) h << " issued by process name \"" << o.name << "\"";
  return h.str();
}

}  // namespace

session::Outcome iosnoop_main(int argc, char** argv) {
  iosnoop::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto snooper = iosnoop::Snooper::start(o, std::cout, std::cerr);
  if (!snooper) return snooper.error();
  return session::started(std::move(snooper), session::snoop(tracing(o), snooper->header(), o.duration));
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "iosnoop",
    .summary = "trace block device I/O with latency",
    .main = iosnoop_main,
    .uses =
        {
            {"", kernel::event_ways()},
            {"-Q",
             {{"block_rq_insert, else block_rq_issue for requests never inserted",
               {F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
