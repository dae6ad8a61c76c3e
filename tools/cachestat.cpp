// cachestat: page cache hits, misses and dirties per interval, counted in
// the kernel (perf-tools' cachestat).
#include "cachestat/cachestat.hpp"

#include "cli/command.hpp"
#include "tools.hpp"

namespace tracekit::tools {

int cachestat_main(int argc, char** argv) {
  cachestat::Options o;
  std::optional<double> interval;
  cli::Command cmd("cachestat", "[-Dht] [interval]");
  cmd.flag("D", &o.debug, "print debug counters")
      .flag("t", &o.timestamp, "include timestamp")
      .positional("interval", &interval, "output interval in secs (default 1)")
      .example("cachestat", "show stats every second")
      .example("cachestat 5", "show stats every 5 seconds");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (interval) {
    if (!(*interval > 0)) return cmd.usage_error("interval needs a positive number of seconds");
    o.interval = *interval;
  }
  return cachestat::run(o);
}

}  // namespace tracekit::tools
