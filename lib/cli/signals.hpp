// Ending a run: SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGPIPE set a flag (and
// interrupt blocking calls: no SA_RESTART) so that the main loop ends
// normally and destructors undo what the run created in the kernel. A second
// SIGINT, SIGTERM, SIGHUP or SIGQUIT exits at once (128 + signal), leaving
// what is left in tracefs to the next run's sweep (util/exit_writes.hpp),
// except while output is being written (WritingOutput).
#pragma once

#include <chrono>
#include <optional>

namespace tracekit::cli {

// Installs the handlers. Idempotent.
void install_stop_handlers();
// True once one of the signals arrived (or request_stop() was called).
bool stop_requested();
// The first signal that arrived, 0 if none. A summary tool prints its
// summary unless this is SIGPIPE.
int stop_signal();
// How many stop signals arrived (request_stop() with a signal counts too).
// The first ends tracing; output (lib/cli/output) stops at the second.
int stop_signal_count();
// While one of these lives (the tool's stdout is being written, maybe
// blocked on a slow reader), a second stop signal does not exit at once: it
// is counted, and the writer (lib/cli/output) stops printing and says what
// it did not print. Not nested across threads.
class WritingOutput {
 public:
  WritingOutput();
  ~WritingOutput();
  WritingOutput(const WritingOutput&) = delete;
  WritingOutput& operator=(const WritingOutput&) = delete;
};
// Sets the flag as if a signal had arrived (tests, internal errors).
void request_stop(int sig = 0);
// True when stdout is a pipe or socket whose reader has gone (POLLERR /
// POLLHUP on fd 1): streaming tools stop then, as if on SIGPIPE.
bool stdout_closed();

// Sleeps up to ms milliseconds; returns early when a stop signal arrives.
void sleep_unless_stopped(int ms);

// A deadline from an optional duration in seconds (nullopt: none).
class Deadline {
 public:
  explicit Deadline(std::optional<double> seconds);
  bool expired() const;
  // Milliseconds a poll may wait: min(max_ms, time left), rounded up to the
  // next millisecond, never negative; max_ms when there is no deadline. A
  // negative max_ms (poll's "forever") caps nothing: the time left, or max_ms
  // itself without a deadline. A duration <= 0 (or NaN) has expired at once.
  int poll_timeout_ms(int max_ms) const;
  // For periodic work (-i): moves the deadline on by seconds from where it
  // was, not from now, so the periods do not drift by the time the work
  // takes; periods already past (a stalled machine) are skipped.
  void advance(double seconds);

 private:
  std::optional<std::chrono::steady_clock::time_point> end_;
};

}  // namespace tracekit::cli
