// iolatency: summarize block I/O latency as a histogram (perf-tools'
// iolatency).
#include <cerrno>
#include <cmath>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "family/block/event.hpp"
#include "iolatency/iolatency.hpp"
#include "session/run.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, iolatency::Options& o) {
  std::optional<double> interval, count;
  cli::Command cmd("iolatency", "[-hQT] [-d device] [-i iotype] [interval [count]]");
  cmd.option("d", &o.trace.device, "device", "device string (eg, \"202,1\", or a name: \"loop0\")")
      .option("i", &o.trace.iotype, "iotype", "match type (eg, '*R*' for all reads)")
      .flag("Q", &o.trace.queue, "use queue insert as start time")
      .flag("T", &o.timestamps, "timestamp on output")
      .positional("interval", &interval, "summary interval, seconds (default 1)")
      .positional("count", &count, "number of summaries")
      .example("iolatency", "summarize latency every second")
      .example("iolatency -Q", "include block I/O queue time")
      .example("iolatency 5 2", "2 x 5 second summaries")
      .example("iolatency -i '*R*'", "trace reads")
      .example("iolatency -d 202,1", "trace device 202,1 only");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (cmd.given("i"))
    if (auto f = block::iotype_filter(o.trace.iotype); !f) return cmd.usage_error(f.error().str());
  if (cmd.given("d") && o.trace.device.empty()) return cmd.usage_error("-d needs a device");
  if (interval) {
    if (!(*interval > 0)) return cmd.usage_error("interval must be a positive number of seconds");
    o.interval = *interval;
  }
  if (count) {
    if (!(*count >= 1) || *count != std::floor(*count) || *count > 1e9)
      return cmd.usage_error("count must be a whole number of summaries, 1 or more");
    o.count = static_cast<long>(*count);
  }
  return std::nullopt;
}

}  // namespace

session::Outcome iolatency_main(int argc, char** argv) {
  iolatency::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto hist = iolatency::Histogram::start(o, std::cerr);
  if (!hist) return hist.error();
  session::RunOptions r;
  std::ostringstream h;
  h << "Tracing block I/O. Output every " << o.interval << " seconds."
    << (o.count ? "" : " Ctrl-C to end.") << "\n";
  r.header = h.str();
  r.interval = o.interval;
  if (o.count) r.duration = o.interval * static_cast<double>(*o.count);
  r.after_report = "\nEnding tracing...\n";
  return session::started(std::move(hist), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "iolatency",
    .summary = "summarize block I/O latency as a histogram",
    .main = iolatency_main,
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
