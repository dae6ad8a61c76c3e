// The life of a summary tool (profile, offcputime) once its tracer is
// running: header, trace until the duration ends or a stop signal, report.
#pragma once

#include <csignal>
#include <iostream>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "cli/signals.hpp"

namespace tracekit::cli {

// Tracer: poll(int timeout_ms), stop(), report(std::ostream& out,
// std::ostream& err). Prints the header unless folded, polls until duration
// (nullopt: until a stop signal), stops, and prints the report unless stdout
// has gone (SIGPIPE: nobody would read it). Returns the exit code.
template <class Tracer>
int trace_then_report(Tracer& tracer, const std::string& header, bool folded,
                      std::optional<double> duration, int poll_ms) {
  if (!folded) std::cout << header << std::endl;
  Deadline deadline(duration);
  while (!stop_requested() && !deadline.expired()) tracer.poll(deadline.poll_timeout_ms(poll_ms));
  tracer.stop();
  if (stop_signal() == SIGPIPE) return kExitOk;
  if (!folded) std::cout << "\n";
  tracer.report(std::cout, std::cerr);
  return kExitOk;
}

}  // namespace tracekit::cli
