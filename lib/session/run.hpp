// The life of a run once its events are enabled, the same for every tool:
// the header, tracing in one of three modes, the report, and how the run
// ends (Ctrl-C, a duration, a failed or closed stdout).
//
//  - streaming (the default): events are read as they arrive (poll) until a
//    stop signal or the duration; a tool that prints events prints them as
//    it reads them, a tool that sums them prints its report at the end;
//  - interval (-i SECS): as streaming, and every SECS seconds the report so
//    far is printed and cleared, on a fixed schedule (the time a report
//    takes does not shift the next), each stamped HH:MM:SS with -T;
//  - buffered (-d SECS): nothing is read while tracing; the kernel buffer
//    holds the events, and they are read once, at the end (the engine's
//    stop), where the engine reports any it could not hold.
//
// Stop signals (lib/cli/signals) only set a flag: every wait here returns
// within poll_ms of one, and the engine's destructor (the session's
// teardown) undoes what the run created in the kernel.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

namespace tracekit::session {

// A tool's engine: what reads the events of its run and keeps (or prints)
// what it makes of them. One shape for every tool: created started (events
// enabled), then poll, stop, report.
class Engine {
 public:
  Engine() = default;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  Engine(Engine&&) = default;
  Engine& operator=(Engine&&) = default;
  virtual ~Engine() = default;
  // Waits up to timeout_ms for events and handles those that arrived.
  virtual void poll(int timeout_ms) = 0;
  // Turns tracing off and reads what is left in the kernel's buffers.
  virtual void stop() = 0;
  // Prints what was gathered since the last report and forgets it (or, for
  // a tool that prints events, what is left to print); warnings go to err.
  virtual void report(std::ostream& out, std::ostream& err) = 0;
};

struct RunOptions {
  // Printed as it is before tracing starts, then flushed ("Tracing ... Hit
  // Ctrl-C to end.\n"); empty: nothing (folded output has no header).
  std::string header;
  // The run ends after this many seconds (-D, a positional duration, -d);
  // nullopt: at a stop signal only.
  std::optional<double> duration;
  // Interval mode (-i): a report every this many seconds.
  std::optional<double> interval;
  // -T: each report begins with the time of day, HH:MM:SS.
  bool timestamp = false;
  // Buffered mode (-d): nothing is read until duration has passed (or a
  // stop signal came). Needs a duration.
  bool buffered = false;
  // The longest a poll waits (how soon a stop signal is noticed while the
  // engine is not interrupted by it, and how often a tool's rings are read).
  int poll_ms = 250;
  // Printed before each report ("\n" for bcc's summaries).
  const char* before_report = "";
  // Printed after the last report ("Detaching...\n").
  const char* after_report = "";
  // A tool that prints events: the run also ends when stdout's reader has
  // gone (the tool has nothing left to do), and the last report is made
  // even when stdout has failed, for the engine to count what it could not
  // print. A tool that sums events skips its report then: nobody would read
  // it, or the write would fail again (cli::StdoutGuard says so).
  bool prints_events = false;
};

// A bcc summary tool's run (profile, offcputime, stackcount): the header
// line unless folded, a blank line before each report unless folded.
RunOptions summary(const std::string& header, bool folded);

// A perf-tools snoop tool's run (opensnoop, execsnoop, killsnoop, iosnoop):
// it prints events,
// then "\nEnding tracing..."; buffered for buffered_secs with -d, else live
// until a stop signal. The header is perf-tools': tracing ("Tracing
// open()s issued by PID 181"), then " for 5 seconds (buffered)...\n" or
// ". Ctrl-C to end.\n", then the column header (columns, with its newline).
RunOptions snoop(const std::string& tracing, const std::string& columns,
                 std::optional<double> buffered_secs);

// "WARNING: N events lost: the kernel buffer was full." (with "(try a
// shorter -d)" in buffered mode) on err, when lost is not 0.
void report_lost(std::ostream& err, uint64_t lost, bool buffered);

// Runs engine e (already tracing) as o says and returns the tool's exit
// code: 0, also after a stop signal; a failed write to stdout is reported
// by cli::StdoutGuard, which sets the exit code.
int run(Engine& e, const RunOptions& o);

}  // namespace tracekit::session
