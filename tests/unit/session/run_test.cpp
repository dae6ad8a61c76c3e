// session::run against a fake engine: the order of header, polls, stop and
// reports in each mode, and how a stop signal or a closed stdout ends a run.
// Stop state is process-wide: each case runs in a forked child.
#include "session/run.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <iostream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "../in_child.hpp"
#include "cli/signals.hpp"

namespace tracekit::session {
namespace {

using tracekit::testing::in_child;

// Records what the session asked of it; ends the run (as a signal would)
// at its stop_after-th poll.
struct FakeEngine : Engine {
  int stop_after = 0;
  int stop_sig = SIGINT;
  int polls = 0, stops = 0, reports = 0;
  int max_timeout = -2;
  bool polled_after_stop = false;
  std::string log;

  void poll(int timeout_ms) override {
    if (stops) polled_after_stop = true;
    ++polls;
    max_timeout = std::max(max_timeout, timeout_ms);
    log += "p";
    if (stop_after && polls >= stop_after) cli::request_stop(stop_sig);
    else std::this_thread::sleep_for(std::chrono::milliseconds(std::max(0, timeout_ms)));
  }
  void stop() override {
    ++stops;
    log += "s";
  }
  void report(std::ostream& out, std::ostream&) override {
    ++reports;
    log += "r";
    out << "report " << reports << "\n";
  }
};

// Runs session::run with std::cout captured; returns its exit code.
int run_captured(FakeEngine& e, const RunOptions& o, std::string& out) {
  std::ostringstream captured;
  auto* old = std::cout.rdbuf(captured.rdbuf());
  int code = run(e, o);
  std::cout.rdbuf(old);
  out = captured.str();
  return code;
}

TEST(SessionRunTest, StreamingPollsUntilAStopSignalThenStopsAndReportsOnce) {
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              e.stop_after = 3;
              RunOptions o;
              o.header = "Tracing... Hit Ctrl-C to end.\n";
              o.before_report = "\n";
              o.after_report = "Detaching...\n";
              o.poll_ms = 5;
              std::string out;
              if (run_captured(e, o, out) != 0) return 1;
              if (e.log != "pppsr") return 2;
              if (out != "Tracing... Hit Ctrl-C to end.\n\nreport 1\nDetaching...\n") return 3;
              if (e.max_timeout != 5) return 4;  // no duration: poll_ms
              return 0;
            }),
            0);
}

TEST(SessionRunTest, DurationEndsTheRunAndCapsEachWait) {
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              RunOptions o;
              o.duration = 0.05;
              o.poll_ms = 1000;
              std::string out;
              if (run_captured(e, o, out) != 0) return 1;
              if (e.polls < 1 || e.stops != 1 || e.reports != 1) return 2;
              if (e.max_timeout > 50) return 3;  // never past the duration
              if (e.polled_after_stop) return 4;
              if (out != "report 1\n") return 5;  // no header, nothing around the report
              return 0;
            }),
            0);
}

TEST(SessionRunTest, IntervalReportsOnScheduleWithTimestamps) {
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              RunOptions o;
              o.interval = 0.02;
              o.duration = 0.11;
              o.timestamp = true;
              o.poll_ms = 1000;
              std::string out;
              if (run_captured(e, o, out) != 0) return 1;
              if (e.stops != 1) return 2;
              // Reports at 20, 40, 60, 80, 100 ms (some may be skipped on a
              // stalled machine, never doubled) and the last at the end.
              if (e.reports < 1 || e.reports > 6) return 3;
              if (e.max_timeout > 20) return 4;  // each wait ends by the next report
              if (e.log.back() != 'r' || e.log[e.log.size() - 2] != 's') return 5;
              static const std::regex stamped("(\\d\\d:\\d\\d:\\d\\d\nreport \\d+\n)+");
              if (!std::regex_match(out, stamped)) return 6;
              return 0;
            }),
            0);
}

TEST(SessionRunTest, BufferedReadsNothingUntilTheEnd) {
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              RunOptions o;
              o.header = "Tracing for 0.05 seconds (buffered)...\n";
              o.buffered = true;
              o.duration = 0.05;
              o.poll_ms = 10;
              std::string out;
              auto t0 = std::chrono::steady_clock::now();
              if (run_captured(e, o, out) != 0) return 1;
              if (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(50)) return 2;
              if (e.log != "sr") return 3;
              if (out != "Tracing for 0.05 seconds (buffered)...\nreport 1\n") return 4;
              return 0;
            }),
            0);
}

TEST(SessionRunTest, BufferedEndsEarlyOnAStopSignal) {
  EXPECT_EQ(in_child([] {
              cli::install_stop_handlers();
              std::thread t([] {
                std::this_thread::sleep_for(std::chrono::milliseconds(20));
                cli::request_stop(SIGINT);
              });
              FakeEngine e;
              RunOptions o;
              o.buffered = true;
              o.duration = 3600;
              o.poll_ms = 10;
              std::string out;
              int code = run_captured(e, o, out);
              t.join();
              if (code != 0) return 1;
              if (e.log != "sr") return 2;  // what the buffer holds is still read and reported
              return 0;
            }),
            0);
}

// SIGPIPE (the reader has gone): a summary is not printed; a tool that
// prints events still gets its last report, to count what it could not
// print, but nothing is printed after it.
TEST(SessionRunTest, ClosedPipeSkipsTheSummaryButNotTheEventCount) {
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              e.stop_after = 1;
              e.stop_sig = SIGPIPE;
              RunOptions o;
              o.after_report = "Detaching...\n";
              std::string out;
              if (run_captured(e, o, out) != 0) return 1;
              if (e.log != "ps") return 2;
              if (!out.empty()) return 3;
              return 0;
            }),
            0);
  EXPECT_EQ(in_child([] {
              FakeEngine e;
              e.stop_after = 1;
              e.stop_sig = SIGPIPE;
              RunOptions o;
              o.after_report = "Detaching...\n";
              o.prints_events = true;
              std::string out;
              if (run_captured(e, o, out) != 0) return 1;
              if (e.log != "psr") return 2;
              if (out != "report 1\n") return 3;
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace tracekit::session
