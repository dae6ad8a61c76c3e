#include "session/run.hpp"

#include <algorithm>
#include <csignal>
#include <ctime>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "perf/stack_sampler.hpp"

namespace tracekit::session {

namespace {

void print_report(Engine& e, const RunOptions& o) {
  std::cout << o.before_report;
  if (o.timestamp) {
    char buf[16];
    std::time_t now = std::time(nullptr);
    std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
    std::cout << buf << "\n";
  }
  e.report(std::cout, std::cerr);
  std::cout.flush();
}

}  // namespace

RunOptions summary(const std::string& header, bool folded) {
  RunOptions o;
  if (!folded) {
    o.header = header;
    o.header += '\n';
    o.before_report = "\n";
  }
  return o;
}

RunOptions snoop(const std::string& tracing, const std::string& columns,
                 std::optional<double> buffered_secs) {
  RunOptions o;
  o.prints_events = true;
  std::ostringstream h;
  h << tracing;
  if (buffered_secs)
    h << " for " << *buffered_secs << " seconds (buffered)...\n";
  else
    h << ". Ctrl-C to end.\n";
  o.header = h.str() + columns;
  o.after_report = "\nEnding tracing...\n";
  if (buffered_secs) {
    o.buffered = true;
    o.duration = buffered_secs;
  }
  return o;
}

void report_lost(std::ostream& err, uint64_t lost, bool buffered) {
  if (lost) err << perf::lost_events_warning(lost, buffered ? "try a shorter -d" : "");
}

int run(Engine& e, const RunOptions& o) {
  if (!o.header.empty()) std::cout << o.header << std::flush;
  cli::Deadline end(o.duration);
  auto go_on = [&] {
    return !cli::stop_requested() && !end.expired() && !cli::output_failed() &&
           !(o.prints_events && cli::stdout_closed());
  };
  if (o.buffered) {
    while (go_on()) cli::sleep_unless_stopped(end.poll_timeout_ms(o.poll_ms));
  } else {
    cli::Deadline next(o.interval);
    while (go_on()) {
      e.poll(std::min(end.poll_timeout_ms(o.poll_ms), next.poll_timeout_ms(o.poll_ms)));
      if (o.interval && next.expired() && go_on()) {
        print_report(e, o);
        next.advance(*o.interval);
      }
    }
  }
  e.stop();
  const bool unread = cli::stop_signal() == SIGPIPE || cli::output_failed() || cli::stdout_closed();
  if (unread && !o.prints_events) return cli::kExitOk;
  print_report(e, o);
  if (!unread) std::cout << o.after_report << std::flush;
  return cli::kExitOk;
}

}  // namespace tracekit::session
