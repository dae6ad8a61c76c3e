// tcpretrans: trace TCP retransmits with their addresses, ports and state
// (perf-tools' tcpretrans).
#include "tcpretrans/tcpretrans.hpp"

#include <cerrno>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "output/tcpretrans.hpp"
#include "session/run.hpp"
#include "tools.hpp"

namespace tracekit::tools {

int tcpretrans_main(int argc, char** argv) {
  tcpretrans::Options o;
  cli::Command cmd("tcpretrans", "[-hls]");
  cmd.flag("l", &o.loss_probes, "trace TCP tail loss probes")
      .flag("s", &o.stacks, "print stack traces")
      .example("tcpretrans", "trace TCP retransmits")
      .example("tcpretrans -l", "retransmits and tail loss probes")
      .example("tcpretrans -s", "with the kernel stack of each");
  if (auto code = cmd.parse(argc, argv)) return *code;

  cli::install_stop_handlers();
  auto tracer = tcpretrans::Tracer::start(o, std::cout, std::cerr);
  if (!tracer) {
    if (tracer.error().err == EINTR && cli::stop_requested()) return cli::kExitOk;
    std::cerr << "tcpretrans: " << tracer.error().str() << "\n";
    return cli::kExitFailure;
  }
  session::RunOptions r;
  r.prints_events = true;
  std::ostringstream h;
  output::retransmit_header(h);
  r.header = h.str();
  r.after_report = "\nEnding tracing...\n";
  return session::run(*tracer, r);
}

}  // namespace tracekit::tools
