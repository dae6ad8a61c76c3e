// bitesize: a histogram of block I/O sizes, counted in the kernel
// (perf-tools' bitesize).
#include "bitesize/bitesize.hpp"
#include "cli/command.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"

namespace tracekit::tools {

session::Outcome bitesize_main(int argc, char** argv) {
  bitesize::Options o;
  std::string buckets, device;
  cli::Command cmd("bitesize", "[-h] [-b buckets] [-d device] [seconds]");
  cmd.option("b", &buckets, "buckets", "specify histogram buckets (Kbytes)")
      .option("d", &device, "device", "only this device (sda1, or MAJOR,MINOR)")
      .positional("seconds", &o.duration, "seconds to trace (default: until Ctrl-C)")
      .example("bitesize", "trace I/O size until Ctrl-C")
      .example("bitesize 10", "trace I/O size for 10 seconds")
      .example("bitesize -b 8,16,32", "specify custom bucket points")
      .example("bitesize -d sda 10", "sda's I/O for 10 seconds");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (cmd.given("b")) {
    auto edges = bitesize::parse_buckets(buckets);
    if (!edges) return cmd.usage_error(edges.error().message);
    o.buckets = std::move(*edges);
  }
  if (cmd.given("d")) {
    if (device.empty()) return cmd.usage_error("-d needs a device");
    o.device = device;
  }
  if (o.duration && !(*o.duration > 0)) return cmd.usage_error("seconds must be positive");
  return bitesize::set_up(o);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "bitesize",
    .summary = "histogram of block I/O sizes, counted in the kernel",
    .main = bitesize_main,
    .uses =
        {
            {"",
             {{"perf counters on block:block_rq_issue, one per bucket, filtered on nr_sector",
               {F::kPerfEvents, F::kEventTracing}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
