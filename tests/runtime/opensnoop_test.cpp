// opensnoop against the opens workload (tests/workloads/opens.c): after its
// "go" it opens DIR/tracekit-opens.PID (DIR: a directory of the test's
// own) exactly kOpens times through the C library (open() and openat() in
// turn), each returning the same descriptor, then
// DIR/tracekit-opens.PID.missing kFailed times (ENOENT). The truth:
// exactly that many lines for each path, with COMM "opens", its PID, the
// descriptor it printed (in hex, "0x3", as perf-tools prints it), and -1
// for the failures. This kernel has neither
// kprobes nor eprobes: the file names come from uprobes on libc's
// wrappers, which the tool says on stderr (the kprobe path is tested in
// tests/vm/opensnoop.sh).
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr long kOpens = 97;   // a prime
constexpr long kFailed = 13;  // another

struct Row {
  std::string comm;
  long pid = 0, fd = 0;
  std::string file;
};

// The event lines of opensnoop's output (after the COMM header line), as
// rows; with timestamps the first column is skipped.
std::vector<Row> rows_of(const std::string& out, bool timestamps = false) {
  std::vector<Row> rows;
  bool started = false;
  for (const auto& l : lines_of(out)) {
    if (!started) {
      started = l.find("COMM") != std::string::npos && l.find("FILE") != std::string::npos;
      continue;
    }
    if (l.empty() || l == "Ending tracing...") continue;
    std::istringstream in(l);
    Row r;
    std::string time;
    if (timestamps) in >> time;
    // The descriptor as perf-tools prints it: "0x3", or -1 for a failure.
    std::string fd;
    in >> r.comm >> r.pid >> fd;
    r.fd = fd.rfind("0x", 0) == 0 ? std::stol(fd.substr(2), nullptr, 16) : std::stol(fd);
    std::getline(in >> std::ws, r.file);
    rows.push_back(r);
  }
  return rows;
}

class OpensnoopRuntime : public TracingTest {
 protected:
  // The workload's files go in a directory of the test's own, removed at
  // the end: a workload killed before its opens are done (a run cut short,
  // ClosedStdoutEndsTheRun) leaves its file behind.
  void SetUp() override {
    TracingTest::SetUp();
    char tmpl[] = "/tmp/tracekit-opensnoop-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr) << strerror(errno);
    dir_ = tmpl;
  }
  void TearDown() override {
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      EXPECT_FALSE(ec) << dir_ << ": " << ec.message();
    }
    TracingTest::TearDown();
  }
  // The opens workload, opening in dir_.
  Workload opens(long n, long m) {
    return Workload("opens", {std::to_string(n), std::to_string(m), dir_});
  }
  std::string file_of(const Workload& w) const { return dir_ + "/tracekit-opens." + w.pid_str(); }
  std::string dir_;
  struct Traced {
    RunResult r;
    long pid = 0;
    long fd = -2;  // what the workload's opens returned
    std::string file, missing;
    // The uprobes of the tool's group while it ran: one per probe, as
    // uprobe_events lists them ("p:tracekit_PID/EVENT place args").
    std::vector<std::string> uprobes;
    std::set<std::string> events;  // their distinct events
  };
  // Runs opensnoop with args ("PID" replaced by the workload's pid, "FILE"
  // by its file's path) while the workload opens; header is the text that
  // says it traces; a live run is ended by sig.
  Traced trace_opens(std::vector<std::string> args,
                     const std::string& header = "Ctrl-C to end.\n", int sig = SIGINT) {
    Traced t;
    Workload w = opens(kOpens, kFailed);
    t.pid = w.pid();
    t.file = file_of(w);
    t.missing = t.file + ".missing";
    for (auto& a : args) {
      if (a == "PID") a = w.pid_str();
      if (a == "FILE") a = t.file;
    }
    args.insert(args.begin(), tool_path("opensnoop"));
    Running tool(args);
    EXPECT_TRUE(tool.wait_for_stdout(header, 60)) << "no header";
    t.uprobes = uprobes_of(tool.pid());
    t.events = uprobe_events_of(tool.pid());
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    for (const auto& l : w.lines())
      if (l.rfind("fd ", 0) == 0) t.fd = std::stol(l.substr(3));
    if (header == "Ctrl-C to end.\n") tool.signal(sig);
    t.r = tool.finish(60);
    return t;
  }

  // Exactly want_ok rows for the file and want_failed for the missing
  // one, each with the workload's COMM, PID and descriptor (-1 failed).
  static void expect_rows(const Traced& t, long want_ok, long want_failed,
                          bool timestamps = false) {
    long ok = 0, failed = 0;
    for (const auto& r : rows_of(t.r.out, timestamps)) {
      if (r.file != t.file && r.file != t.missing) continue;
      EXPECT_EQ(r.comm, "opens");
      EXPECT_EQ(r.pid, t.pid);
      if (r.file == t.file) {
        ++ok;
        EXPECT_EQ(r.fd, t.fd);
      } else {
        ++failed;
        EXPECT_EQ(r.fd, -1);
      }
    }
    EXPECT_EQ(ok, want_ok) << t.r.out.substr(0, 2000);
    EXPECT_EQ(failed, want_failed) << t.r.out.substr(0, 2000);
  }
};

TEST_F(OpensnoopRuntime, EveryOpenOfAProcessWithItsDescriptor) {
  auto t = trace_opens({"-p", "PID"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  ASSERT_GE(t.fd, 0);
  expect_rows(t, kOpens, kFailed);
  auto lines = lines_of(t.r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            "Tracing open()s issued by PID " + std::to_string(t.pid) + ". Ctrl-C to end.");
  EXPECT_EQ(lines[1], "COMM             PID      FD FILE");
  // Only the process's opens.
  for (const auto& r : rows_of(t.r.out)) EXPECT_EQ(r.pid, t.pid) << r.file;
  EXPECT_NE(t.r.err.find("file names from uprobes on "), std::string::npos) << t.r.err;
  EXPECT_NE(t.r.err.find("without this C library"), std::string::npos) << t.r.err;
}

// -L: the thread (the workload's only one) by a common_pid filter.
TEST_F(OpensnoopRuntime, ThreadFilter) {
  auto t = trace_opens({"-L", "PID"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kOpens, kFailed);
  for (const auto& r : rows_of(t.r.out)) EXPECT_EQ(r.pid, t.pid) << r.file;
  EXPECT_EQ(lines_of(t.r.out)[0],
            "Tracing open()s issued by TID " + std::to_string(t.pid) + ". Ctrl-C to end.");
}

// Usage errors: exit 2, one line and the synopsis, nothing set up.
TEST_F(OpensnoopRuntime, UsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-p", "1", "-n", "x"},
                                               {"-d", "0"},
                                               {"-p", "0"},
                                               {"("},
                                               {"-n", "a(b"},
                                               {"a", "b"},
                                               {"-q"}}) {
    std::vector<std::string> argv{tool_path("opensnoop")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("opensnoop: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("USAGE: opensnoop [-htx]"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(OpensnoopRuntime, FailedOpensOnly) {
  auto t = trace_opens({"-x", "-p", "PID"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, 0, kFailed);
  for (const auto& r : rows_of(t.r.out)) EXPECT_EQ(r.fd, -1) << r.file;
}

// A process name and a file name pattern, with timestamps, system-wide.
TEST_F(OpensnoopRuntime, NameAndFilenameFilters) {
  auto t = trace_opens({"-t", "-n", "^opens$", "tracekit-opens\\.[0-9]+$"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kOpens, 0, true);
  EXPECT_EQ(lines_of(t.r.out)[1], "TIMEs            COMM             PID      FD FILE");
  for (const auto& r : rows_of(t.r.out, true)) EXPECT_EQ(r.comm, "opens");
}

TEST_F(OpensnoopRuntime, Buffered) {
  auto t = trace_opens({"-d", "3", "-p", "PID"}, "(buffered)...\n");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kOpens, kFailed);
  EXPECT_EQ(lines_of(t.r.out)[0], "Tracing open()s issued by PID " + std::to_string(t.pid) +
                                      " for 3 seconds (buffered)...");
}

// With kprobes and eprobes forced off (as on this kernel anyway), the same
// truth by the same path.
TEST_F(OpensnoopRuntime, ForcedToUprobes) {
  std::optional<Traced> got;
  {
    ForcedFeatures forced("-kprobes,-eprobes");
    got.emplace(trace_opens({"-p", "PID"}));
  }
  auto& t = *got;
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kOpens, kFailed);
  EXPECT_NE(t.r.err.find("file names from uprobes on "), std::string::npos) << t.r.err;
}

// The C library's open wrappers (same argument names) are one event where
// the kernel appends probes to an event (probe_append): disabling it waits
// for one kernel synchronisation, not one per wrapper. Forced off, one event
// per wrapper, and the same truth.
TEST_F(OpensnoopRuntime, WrappersShareOneEventUnlessForcedOff) {
  auto shared = trace_opens({"-p", "PID"});
  ASSERT_EQ(shared.r.exit_code, 0) << shared.r.err;
  expect_rows(shared, kOpens, kFailed);
  ASSERT_GE(shared.uprobes.size(), 2u);
  EXPECT_EQ(shared.events, std::set<std::string>{"c0_openat"});
  std::optional<Traced> got;
  {
    ForcedFeatures forced("-probe_append");
    got.emplace(trace_opens({"-p", "PID"}));
  }
  auto& own = *got;
  ASSERT_EQ(own.r.exit_code, 0) << own.r.err;
  expect_rows(own, kOpens, kFailed);
  EXPECT_EQ(own.uprobes.size(), shared.uprobes.size());
  EXPECT_EQ(own.events.size(), own.uprobes.size());  // one event each
  // The same path, said the same way (the workload's PID aside: the fallback
  // pass's "cannot follow forks" line names it).
  auto said = [](const std::string& err) {
    return std::regex_replace(err, std::regex("PID [0-9]+"), "PID N");
  };
  EXPECT_EQ(said(own.r.err), said(shared.r.err));
}

// Without any way to read the strings: the missing features named, exit 1,
// nothing left behind.
TEST_F(OpensnoopRuntime, NoWayNamesTheMissingFeatures) {
  RunResult r;
  {
    ForcedFeatures forced("-kprobes,-eprobes,-uprobes");
    r = run({tool_path("opensnoop")});
  }
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("uprobe events (uprobe_events) turned off by TRACEKIT_KERNEL_FEATURES"),
            std::string::npos)
      << r.err;
}

// tracekit features says by which path opensnoop works: on this kernel the
// uprobes, as the runs above took (kprobes forced off elsewhere).
TEST_F(OpensnoopRuntime, FeaturesNamesThePath) {
  auto r = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-kprobes,-eprobes", tool_path("tracekit"),
                "features"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string line;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("opensnoop ", 0) == 0 && l.find(" - ") != std::string::npos) line = l;
  EXPECT_NE(line.find("works: file names by uprobes on the C library's open wrappers"),
            std::string::npos)
      << r.out;
}

// SIGTERM and SIGHUP end a run as Ctrl-C does: every open printed, exit 0,
// tracefs as it was (TearDown).
TEST_F(OpensnoopRuntime, SigtermAndSighupEndARun) {
  for (int sig : {SIGTERM, SIGHUP}) {
    auto t = trace_opens({"-p", "PID"}, "Ctrl-C to end.\n", sig);
    ASSERT_EQ(t.r.exit_code, 0) << strsignal(sig) << ": " << t.r.err;
    expect_rows(t, kOpens, kFailed);
  }
}

// Two runs at once, each in its own instance, on the same opens: both exact.
// Without instances (forced off) both would trace at the top level:
// perf-tools' lock admits the first, the second is refused naming it.
TEST_F(OpensnoopRuntime, TwoRunsAtOnce) {
  Workload w = opens(kOpens, kFailed);
  Traced t;
  t.pid = w.pid();
  t.file = file_of(w);
  t.missing = t.file + ".missing";
  Running a({tool_path("opensnoop"), "-p", w.pid_str()});
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  std::optional<Running> b;
  if (kernel::forced_off(kernel::Feature::kInstances)) {
    auto rb = run({tool_path("opensnoop"), "-x", "-p", w.pid_str()}, 60);
    EXPECT_EQ(rb.exit_code, 1);
    EXPECT_NE(rb.err.find("ftrace is in use by PID " + std::to_string(a.pid())),
              std::string::npos)
        << rb.err;
  } else {
    b.emplace(std::vector<std::string>{tool_path("opensnoop"), "-x", "-p", w.pid_str()});
    ASSERT_TRUE(b->wait_for_stdout("Ctrl-C to end.\n", 60));
  }
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  for (const auto& l : w.lines())
    if (l.rfind("fd ", 0) == 0) t.fd = std::stol(l.substr(3));
  a.signal(SIGINT);
  t.r = a.finish(60);
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kOpens, kFailed);
  if (!b) return;
  b->signal(SIGINT);
  t.r = b->finish(60);
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, 0, kFailed);
}

// `opensnoop | head -n 3`: the run ends once the reader has gone (the
// workload goes on opening), exit 0, and cleans up (TearDown). The reader is
// the shell's read, which passes each line on at once.
TEST_F(OpensnoopRuntime, ClosedStdoutEndsTheRun) {
  Workload w = opens(100000, 0);
  const std::string cmd =
      "'" + tool_path("opensnoop") + "' -p " + w.pid_str() +
      " | { for i in 1 2 3; do IFS= read -r l && printf '%s\\n' \"$l\"; done; }";
  Running sh({"/bin/sh", "-c", cmd});
  ASSERT_TRUE(sh.wait_for_stdout("FILE\n", 60)) << "no header";
  auto t0 = std::chrono::steady_clock::now();
  kill(w.pid(), SIGUSR1);
  auto r = sh.finish(30);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 3u) << r.out;
  EXPECT_LT(secs, 5) << "opensnoop went on after the reader had gone";
}

// A comm (prctl(PR_SET_NAME)) and a file name holding newlines and ESC
// (tests/workloads/hostile.c): one line for the open, each control character
// as '?'; no control byte reaches the terminal and no "/etc/shadow" line is
// forged.
TEST_F(OpensnoopRuntime, ControlCharactersCannotForgeLines) {
  auto h = run_against_hostile({tool_path("opensnoop"), "-p", "PID"}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  char want[160];
  std::snprintf(want, sizeof want, "%-16.16s %-6d %4s /tmp/tracekit-hostile.%d?/etc/shadow",
                "ev?[2J?il", h.pid, "0x3", h.pid);
  long found = 0;
  for (const auto& l : lines_of(h.r.out)) {
    EXPECT_NE(l.rfind("/etc/shadow", 0), 0u) << "a forged line: " << l;
    if (l.find("tracekit-hostile") != std::string::npos) {
      ++found;
      EXPECT_EQ(l, want);
    }
  }
  EXPECT_EQ(found, 1) << h.r.out.substr(0, 3000);
}

}  // namespace
}  // namespace tracekit::testing
