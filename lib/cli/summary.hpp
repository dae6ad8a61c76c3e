// The life of a summary tool (profile, offcputime) once its tracer is
// running: header, trace until the duration ends or a stop signal, report.
#pragma once

#include <csignal>
#include <iostream>
#include <optional>
#include <string>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/signals.hpp"

namespace tracekit::cli {

// Tracer: poll(int timeout_ms), stop(), report(std::ostream& out,
// std::ostream& err). Prints the header unless folded, polls until duration
// (nullopt: until a stop signal) or until a write to stdout fails, stops, and
// prints the report unless stdout has failed (SIGPIPE: nobody would read it;
// a full disk: it would fail too, and StdoutGuard::finish reports it).
// Returns the exit code.
template <class Tracer>
int trace_then_report(Tracer& tracer, const std::string& header, bool folded,
                      std::optional<double> duration, int poll_ms) {
  if (!folded) std::cout << header << std::endl;
  Deadline deadline(duration);
  while (!stop_requested() && !deadline.expired() && !output_failed())
    tracer.poll(deadline.poll_timeout_ms(poll_ms));
  tracer.stop();
  if (stop_signal() == SIGPIPE || output_failed()) return kExitOk;
  if (!folded) std::cout << "\n";
  tracer.report(std::cout, std::cerr);
  std::cout.flush();
  return kExitOk;
}

}  // namespace tracekit::cli
