// tcpretrans: trace TCP retransmits with their addresses, ports and state
// (perf-tools' tcpretrans).
#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "session/run.hpp"
#include "tcpretrans/render.hpp"
#include "tcpretrans/tcpretrans.hpp"

namespace tracekit::tools {

session::Outcome tcpretrans_main(int argc, char** argv) {
  tcpretrans::Options o;
  cli::Command cmd("tcpretrans", "[-hls]");
  cmd.flag("l", &o.loss_probes, "trace TCP tail loss probes")
      .flag("s", &o.stacks, "print stack traces")
      .example("tcpretrans", "trace TCP retransmits")
      .example("tcpretrans -l", "retransmits and tail loss probes")
      .example("tcpretrans -s", "with the kernel stack of each");
  if (auto code = cmd.parse(argc, argv)) return *code;

  auto tracer = tcpretrans::Tracer::start(o, std::cout, std::cerr);
  if (!tracer) return tracer.error();
  session::RunOptions r;
  r.prints_events = true;
  std::ostringstream h;
  output::retransmit_header(h);
  r.header = h.str();
  r.after_report = "\nEnding tracing...\n";
  return session::started(std::move(tracer), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "tcpretrans",
    .summary = "trace TCP retransmits with addresses, ports and state",
    .main = tcpretrans_main,
    .uses =
        {
            {"",
             {{"the tcp:tcp_retransmit_skb tracepoint in a private instance",
               {F::kTcp, F::kInstances, F::kTcpRetransmitTracepoint}},
              {"a kprobe on tcp_retransmit_skb reading the socket in a private instance",
               {F::kTcp, F::kInstances, F::kKprobes}},
              {"the tcp:tcp_retransmit_skb tracepoint at the top level (perf-tools' lock)",
               {F::kTcp, F::kTcpRetransmitTracepoint}},
              {"a kprobe on tcp_retransmit_skb at the top level (perf-tools' lock)",
               {F::kTcp, F::kKprobes}}}},
            {"-l", {{"a kprobe on tcp_send_loss_probe", {F::kTcp, F::kKprobes}}}},
            {"-s", kernel::tracepoint_stack_ways()},
        },
}};
}  // namespace
}  // namespace tracekit::tools
