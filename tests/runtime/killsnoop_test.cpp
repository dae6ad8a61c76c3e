// killsnoop against the kills workload (tests/workloads/kills.c): after its
// "go" (a byte on stdin: a signal would be a kill of its own) it sends its
// child, the target, SIGUSR2 (12) kKills times by kill(), kTgkills times by
// tgkill() and once by tkill(), all returning 0, then kFailed tgkill()s of
// a thread the target does not have (the workload's own: TPID is the
// workload's PID), which fail with ESRCH (-3). The truth: exactly that many
// lines with the workload's PID in the PID column, COMM "kills", TPID,
// SIGNAL and RETURN as sent. The same tests run in scripts/check's fallback
// pass, through raw_syscalls with an id filter.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <iostream>
#include <optional>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr long kKills = 97;    // a prime
constexpr long kTgkills = 13;  // another
constexpr long kTkills = 1;    // fixed by the workload
constexpr long kFailed = 3;
constexpr long kSent = kKills + kTgkills + kTkills;
constexpr long kAll = kSent + kFailed;

struct Row {
  std::string comm;
  long pid = 0, tpid = 0;
  std::string signal;
  long ret = 0;
};

// The event lines of killsnoop's output (after the COMM header line), as
// rows; with timestamps the first column is skipped.
std::vector<Row> rows_of(const std::string& out, bool timestamps = false) {
  std::vector<Row> rows;
  bool started = false;
  for (const auto& l : lines_of(out)) {
    if (!started) {
      started = l.find("COMM") != std::string::npos && l.find("RETURN") != std::string::npos;
      continue;
    }
    if (l.empty() || l == "Ending tracing...") continue;
    std::istringstream in(l);
    Row r;
    std::string time;
    if (timestamps) in >> time;
    in >> r.comm >> r.pid >> r.tpid >> r.signal >> r.ret;
    rows.push_back(r);
  }
  return rows;
}

bool raw_syscalls() { return kernel::forced_off(kernel::Feature::kSyscallTracepoints); }

class KillsnoopRuntime : public TracingTest {
 protected:
  // The kills workload, its target's PID read.
  struct Kills {
    Workload w{"kills",
               {std::to_string(kKills), std::to_string(kTgkills), std::to_string(kFailed)}};
    long target = 0;
    Kills() {
      EXPECT_TRUE(w.wait_line("waiting", 60)) << "the workload did not start its target";
      for (const auto& l : w.lines())
        if (l.rfind("target ", 0) == 0) target = std::stol(l.substr(7));
    }
    // Sends them and waits until they are sent.
    void send() {
      w.go();
      EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    }
  };

  // The args with "TARGET" and "SENDER" replaced by the PIDs.
  static std::vector<std::string> argv_of(std::vector<std::string> args, const Kills& k) {
    for (auto& a : args) {
      if (a == "TARGET") a = std::to_string(k.target);
      if (a == "SENDER") a = k.w.pid_str();
    }
    args.insert(args.begin(), tool_path("killsnoop"));
    return args;
  }

  // Runs killsnoop with args while the workload sends; header is the text
  // that says it traces. Live runs end by Ctrl-C, buffered ones by
  // themselves.
  RunResult trace(Kills& k, const std::vector<std::string>& args,
                  const std::string& header = "Ctrl-C to end.\n") {
    Running tool(argv_of(args, k));
    EXPECT_TRUE(tool.wait_for_stdout(header, 60)) << "no header";
    k.send();
    if (header == "Ctrl-C to end.\n") tool.signal(SIGINT);
    return tool.finish(60);
  }

  // Of the rows sent by the workload: exactly kSent successes to the
  // target and kFailed failures (TPID the workload), as signal names when
  // names is set.
  static void expect_sent(const RunResult& r, const Kills& k, bool timestamps = false,
                          bool names = false, long want_sent = kSent, long want_failed = kFailed) {
    long sent = 0, failed = 0;
    const std::string sig = names ? "SIGUSR2" : "12";
    for (const auto& row : rows_of(r.out, timestamps)) {
      if (row.pid != k.w.pid()) continue;
      EXPECT_EQ(row.comm, "kills");
      EXPECT_EQ(row.signal, sig);
      if (row.tpid == k.target && row.ret == 0)
        ++sent;
      else if (row.tpid == k.w.pid() && row.ret == -3)
        ++failed;
      else
        ADD_FAILURE() << "unexpected row: TPID " << row.tpid << " RETURN " << row.ret;
    }
    EXPECT_EQ(sent, want_sent) << r.out.substr(0, 3000);
    EXPECT_EQ(failed, want_failed) << r.out.substr(0, 3000);
    if (raw_syscalls()) {
      EXPECT_TRUE(contains(r.err, "tracing raw_syscalls with an id filter")) << r.err;
    }
  }
};

TEST_F(KillsnoopRuntime, EveryCallWithTargetSignalAndReturn) {
  Kills k;
  auto r = trace(k, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k);
  auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Tracing kill()s. Ctrl-C to end.");
  EXPECT_EQ(lines[1], "COMM             PID    TPID     SIGNAL     RETURN");
  EXPECT_EQ(lines.back(), "Ending tracing...");
}

// -p is the target (perf-tools: "kill()s issued to PID"): every call to
// it, the failed tgkill()s too (their tgid is the target), and nobody
// else's.
TEST_F(KillsnoopRuntime, TargetPid) {
  Kills k;
  auto r = trace(k, {"-p", "TARGET"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k);
  EXPECT_EQ(rows_of(r.out).size(), static_cast<size_t>(kAll)) << r.out;
  EXPECT_EQ(lines_of(r.out)[0],
            "Tracing kill()s issued to PID " + std::to_string(k.target) + ". Ctrl-C to end.");
}

// -p of the sender: only the failed tgkill()s name it (as their thread).
TEST_F(KillsnoopRuntime, SenderAsTargetPid) {
  Kills k;
  auto r = trace(k, {"-p", "SENDER"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k, false, false, 0, kFailed);
  EXPECT_EQ(rows_of(r.out).size(), static_cast<size_t>(kFailed)) << r.out;
}

TEST_F(KillsnoopRuntime, NameTimestampsAndSignalNames) {
  Kills k;
  auto r = trace(k, {"-t", "-s", "-n", "^kil+s$"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k, true, true);
  EXPECT_EQ(lines_of(r.out)[0],
            "Tracing kill()s issued by process name \"^kil+s$\". Ctrl-C to end.");
  EXPECT_EQ(lines_of(r.out)[1],
            "TIMEs            COMM             PID    TPID     SIGNAL     RETURN");
  double last = 0;
  auto lines = lines_of(r.out);
  for (size_t i = 2; i < lines.size(); ++i) {
    if (lines[i].empty() || lines[i] == "Ending tracing...") continue;
    auto row = rows_of("COMM RETURN\n" + lines[i], true);
    ASSERT_EQ(row.size(), 1u) << lines[i];
    EXPECT_EQ(row[0].comm, "kills");
    double t = std::stod(lines[i]);
    EXPECT_GE(t, last) << "not in time order";
    last = t;
  }
}

// -n with a plain name is also a kernel filter on the entries (checked in
// the run's instance while it traces); the same truth.
TEST_F(KillsnoopRuntime, PlainNameIsAKernelFilter) {
  Kills k;
  Running tool(argv_of({"-n", "^kills$"}, k));
  ASSERT_TRUE(tool.wait_for_stdout("Ctrl-C to end.\n", 60));
  const std::string tracing = "/sys/kernel/tracing";
  std::string filter;
  if (!kernel::forced_off(kernel::Feature::kInstances)) {
    const std::string event = raw_syscalls() ? "raw_syscalls/sys_enter" : "syscalls/sys_enter_kill";
    filter = slurp(tracing + "/instances/tracekit_" + std::to_string(tool.pid()) + "_0/events/" +
                   event + "/filter");
  }
  k.send();
  tool.signal(SIGINT);
  auto r = tool.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k);
  for (const auto& row : rows_of(r.out)) EXPECT_EQ(row.comm, "kills");
  if (!kernel::forced_off(kernel::Feature::kInstances)) {
    EXPECT_TRUE(contains(filter, "comm == \"kills\"")) << filter;
  }
}

TEST_F(KillsnoopRuntime, Buffered) {
  Kills k;
  auto r = trace(k, {"-d", "4", "-p", "TARGET"}, "(buffered)...\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  expect_sent(r, k);
  EXPECT_EQ(lines_of(r.out)[0], "Tracing kill()s issued to PID " + std::to_string(k.target) +
                                    " for 4 seconds (buffered)...");
}

// Without syscall tracepoints (forced): raw_syscalls with an id filter,
// the arguments from args[], -p checked here; the same truth.
TEST_F(KillsnoopRuntime, ThroughRawSyscalls) {
  std::optional<RunResult> r;
  Kills k;
  {
    ForcedFeatures forced("-syscall_tracepoints");
    r = trace(k, {"-p", "TARGET"});
  }
  ASSERT_EQ(r->exit_code, 0) << r->err;
  expect_sent(*r, k);
  EXPECT_EQ(rows_of(r->out).size(), static_cast<size_t>(kAll)) << r->out;
  EXPECT_TRUE(contains(r->err, "tracing raw_syscalls with an id filter")) << r->err;
}

// Two runs at once, each in its own instance: both exact; ended by SIGTERM
// and by SIGHUP.
TEST_F(KillsnoopRuntime, TwoRunsAtOnce) {
  Kills k;
  if (kernel::forced_off(kernel::Feature::kInstances)) {
    // Both would trace at the top level: perf-tools' lock admits the first,
    // the second is refused naming it.
    Running a(argv_of({"-p", "TARGET"}, k));
    ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
    auto b = run(argv_of({"-p", "TARGET"}, k), 60);
    EXPECT_EQ(b.exit_code, 1);
    EXPECT_TRUE(contains(b.err, "ftrace is in use by PID " + std::to_string(a.pid()))) << b.err;
    k.send();
    a.signal(SIGINT);
    auto ra = a.finish(60);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    expect_sent(ra, k);
    return;
  }
  Running a(argv_of({"-p", "TARGET"}, k));
  Running b(argv_of({"-s"}, k));
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(b.wait_for_stdout("Ctrl-C to end.\n", 60));
  k.send();
  // SIGTERM and SIGHUP end a run as Ctrl-C does.
  a.signal(SIGTERM);
  b.signal(SIGHUP);
  auto ra = a.finish(60), rb = b.finish(60);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  expect_sent(ra, k);
  expect_sent(rb, k, false, true);
}

// `killsnoop | head -n 3`: the run ends once the reader has gone, and
// cleans up (TearDown compares tracefs). The reader is the shell's read, which
// passes each line on at once (head's output to a pipe waits for its exit).
TEST_F(KillsnoopRuntime, ClosedStdoutEndsTheRun) {
  Kills k;
  const std::string cmd =
      "'" + tool_path("killsnoop") + "' -p " + std::to_string(k.target) +
      " | { for i in 1 2 3; do IFS= read -r l && printf '%s\\n' \"$l\"; done; }";
  Running sh({"/bin/sh", "-c", cmd});
  ASSERT_TRUE(sh.wait_for_stdout("RETURN\n", 60)) << "no header";
  auto t0 = std::chrono::steady_clock::now();
  k.send();
  auto r = sh.finish(30);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 3u) << r.out;
  EXPECT_LT(secs, 5) << "killsnoop went on after head had gone";
}

TEST_F(KillsnoopRuntime, UsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-p", "1", "-n", "x"},
                                               {"-d", "0"},
                                               {"-d", "x"},
                                               {"-p", "0"},
                                               {"-p", "-5"},
                                               {"-n", "a(b"},
                                               {"-n", ""},
                                               {"file"},
                                               {"-q"}}) {
    std::vector<std::string> argv{tool_path("killsnoop")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("killsnoop: ", 0), 0u) << r.err;
    EXPECT_TRUE(contains(r.err, "USAGE: killsnoop [-hst] [-d secs] [-p PID] [-n name]")) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto h = run({tool_path("killsnoop"), "-h"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_EQ(h.out.rfind("USAGE: killsnoop [-hst]", 0), 0u) << h.out;
}

// A target that does not exist: exit 1, naming it, nothing set up.
TEST_F(KillsnoopRuntime, NoSuchTarget) {
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  auto r = run({tool_path("killsnoop"), "-p", std::to_string(gone)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_TRUE(contains(r.err, "killsnoop: no process with PID " + std::to_string(gone))) << r.err;
}

// perf-tools' killsnoop on the same calls at the same time (it on the
// top-level buffer, ours in its instance). It traces kill() only: kKills
// lines of the workload, each returning 0, where ours has every call. On
// this kernel its TPID and SIGNAL read 0: the kernel prints the entry as
// "sys_kill(pid: 0x6d07, sig: 0xf)", and perf-tools puts a "0x"
// of its own before the number it cuts out.
TEST_F(KillsnoopRuntime, SameKillsAsPerfTools) {
  if (kernel::forced_off(kernel::Feature::kInstances))
    GTEST_SKIP() << "without instances ours traces at the top level too, where perf-tools' lock "
                    "admits one of the two at a time";
  PerfToolsPeer peer("killsnoop");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  Kills k;
  Running ours(argv_of({}, k));
  ASSERT_TRUE(ours.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(peer.start({})) << peer.why_not();
  k.send();
  auto theirs = peer.finish();
  ours.signal(SIGINT);
  auto mine = ours.finish(60);
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  expect_sent(mine, k);
  long kills = 0;
  for (const auto& row : rows_of(theirs.out))
    if (row.pid == k.w.pid()) {
      ++kills;
      EXPECT_EQ(row.ret, 0);
    }
  EXPECT_EQ(kills, kKills) << theirs.out.substr(0, 3000) << theirs.err;
  for (const auto& l : lines_of(theirs.out))
    if (contains(l, " " + k.w.pid_str() + " ")) {
      std::cout << "theirs: " << l << "\n";
      break;
    }
  for (const auto& l : lines_of(mine.out))
    if (contains(l, " " + k.w.pid_str() + " ")) {
      std::cout << "ours:   " << l << "\n";
      break;
    }
}

// A sender renamed with prctl(PR_SET_NAME) to a name holding ESC and a
// newline (tests/workloads/hostile.c): each of its three kill(self, 0) calls
// is one line, the name's control characters as '?'.
TEST_F(KillsnoopRuntime, ControlCharactersInCommsCannotForgeLines) {
  auto h = run_against_hostile({tool_path("killsnoop")}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  char want[160];
  std::snprintf(want, sizeof want, "%-16.16s %-6d %-8d %-10s %-4d", "ev?[2J?il", h.pid, h.pid,
                "0", 0);
  long found = 0;
  for (const auto& l : lines_of(h.r.out)) {
    EXPECT_NE(l.rfind("il ", 0), 0u) << "a forged line: " << l;
    if (l == want) ++found;
  }
  EXPECT_EQ(found, 3) << h.r.out.substr(0, 3000);
}

}  // namespace
}  // namespace tracekit::testing
