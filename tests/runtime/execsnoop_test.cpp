// execsnoop against the execs workload (tests/workloads/execs.c): after its
// "go" it starts kExecs children that exec it through the C library
// (execv, execvp after a failed PATH try, posix_spawn) with the arguments
//   execs child "hello world" <200 digits> end
// and kRaw children that make the execve system call themselves. The
// truth: exactly kExecs lines whose PPID is the workload's PID with those
// arguments, and kRaw more without them (this kernel has neither kprobes
// nor eprobes: the arguments come from uprobes on libc's exec functions,
// which miss the raw calls; those are marked [proc] or [?]). The kprobe
// and eprobe paths are tested in tests/vm/execsnoop.sh.
#include <gtest/gtest.h>
#include <signal.h>

#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr long kExecs = 23;  // a prime
constexpr long kRaw = 5;     // another

std::string long_arg() {
  std::string s;
  for (int i = 0; i < 200; ++i) s += static_cast<char>('0' + i % 10);
  return s;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string child_args() { return "execs child hello world " + long_arg() + " end"; }

struct Row {
  std::string time;
  long pid = 0, ppid = 0;
  std::string args;
};

// The event lines of execsnoop's output (after the PID PPID ARGS header).
std::vector<Row> rows_of(const std::string& out, bool timestamps = false) {
  std::vector<Row> rows;
  bool started = false;
  for (const auto& l : lines_of(out)) {
    if (!started) {
      started = l.find("PPID ARGS") != std::string::npos;
      continue;
    }
    if (l.empty() || l == "Ending tracing...") continue;
    std::istringstream in(l);
    Row r;
    if (timestamps) in >> r.time;
    in >> r.pid >> r.ppid;
    in.get();  // the space before ARGS
    std::getline(in, r.args);
    rows.push_back(r);
  }
  return rows;
}

class ExecsnoopRuntime : public TracingTest {
 protected:
  struct Traced {
    RunResult r;
    long pid = 0;
    std::vector<Row> rows;  // the workload's children's
    std::set<std::string> uprobe_events;  // the tool's, while it ran
  };
  // Runs execsnoop with args while the workload (with wargs) execs;
  // header is the text that says it traces.
  Traced trace_execs(std::vector<std::string> args, std::vector<std::string> wargs = {},
                     const std::string& header = "Ctrl-C to end.\n", bool timestamps = false) {
    Traced t;
    if (wargs.empty()) wargs = {std::to_string(kExecs), std::to_string(kRaw)};
    Workload w("execs", wargs);
    t.pid = w.pid();
    args.insert(args.begin(), tool_path("execsnoop"));
    Running tool(args);
    EXPECT_TRUE(tool.wait_for_stdout(header, 60)) << "no header";
    t.uprobe_events = uprobe_events_of(tool.pid());
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    if (header == "Ctrl-C to end.\n") tool.signal(SIGINT);
    t.r = tool.finish(60);
    for (auto& r : rows_of(t.r.out, timestamps))
      if (r.ppid == t.pid) t.rows.push_back(r);
    return t;
  }

  // Exactly want rows with the children's arguments (args), and raw rows
  // without them: the arguments from /proc marked [proc], or the file
  // name marked [?].
  static void expect_rows(const Traced& t, long want, long raw,
                          const std::string& args = child_args()) {
    long with = 0, without = 0;
    for (const auto& r : t.rows) {
      if (r.args == args) {
        ++with;
      } else if (r.args == args + " [proc]" || ends_with(r.args, "/execs [?]")) {
        ++without;
      } else {
        ADD_FAILURE() << "unexpected arguments: " << r.args;
      }
    }
    EXPECT_EQ(with, want) << t.r.out.substr(0, 3000);
    EXPECT_EQ(without, raw) << t.r.out.substr(0, 3000);
  }
};

TEST_F(ExecsnoopRuntime, EveryExecWithItsArgumentsAndParent) {
  auto t = trace_execs({});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kExecs, kRaw);
  auto lines = lines_of(t.r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Tracing exec()s. Ctrl-C to end.");
  EXPECT_EQ(lines[1], "   PID   PPID ARGS");
  // Each child once, each a different process.
  std::set<long> pids;
  for (const auto& r : t.rows) pids.insert(r.pid);
  EXPECT_EQ(pids.size(), t.rows.size());
  EXPECT_NE(t.r.err.find("arguments from uprobes on "), std::string::npos) << t.r.err;
  EXPECT_NE(t.r.err.find("without this C library"), std::string::npos) << t.r.err;
  // (At least the workload's: other processes' execs count too.)
  EXPECT_NE(t.r.err.find(" execs without arguments seen"), std::string::npos) << t.r.err;
}

// Arguments that are the program's string constants, not mapped in a
// forked child until it touches them: uprobes fault them in.
TEST_F(ExecsnoopRuntime, StringConstants) {
  auto t = trace_execs({}, {std::to_string(kExecs), "0", "literals"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kExecs, 0);
}

// -a 3: three arguments, then [...]; -a 5: all five, no [...].
TEST_F(ExecsnoopRuntime, MaxArguments) {
  auto t = trace_execs({"-a", "3"}, {std::to_string(kExecs), "0"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kExecs, 0, "execs child hello world [...]");
  auto all = trace_execs({"-a", "5"}, {std::to_string(kExecs), "0"});
  ASSERT_EQ(all.r.exit_code, 0) << all.r.err;
  expect_rows(all, kExecs, 0);
}

// -r: the first exec of each child and its second; without -r the first.
TEST_F(ExecsnoopRuntime, ReexecsOnlyWithDashR) {
  const std::vector<std::string> wargs = {std::to_string(kExecs), "0", "reexec"};
  auto once = trace_execs({}, wargs);
  ASSERT_EQ(once.r.exit_code, 0) << once.r.err;
  expect_rows(once, kExecs, 0, "execs reexec again");
  auto both = trace_execs({"-r"}, wargs);
  ASSERT_EQ(both.r.exit_code, 0) << both.r.err;
  long first = 0, second = 0;
  std::map<long, int> per_pid;
  for (const auto& r : both.rows) {
    first += r.args == "execs reexec again";
    second += r.args == child_args();
    ++per_pid[r.pid];
  }
  EXPECT_EQ(first, kExecs) << both.r.out.substr(0, 3000);
  EXPECT_EQ(second, kExecs) << both.r.out.substr(0, 3000);
  EXPECT_EQ(per_pid.size(), static_cast<size_t>(kExecs));
  for (const auto& [pid, n] : per_pid) EXPECT_EQ(n, 2) << pid;
}

// Timestamps: seconds with microseconds, in order.
TEST_F(ExecsnoopRuntime, Timestamps) {
  auto t = trace_execs({"-t"}, {}, "Ctrl-C to end.\n", true);
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kExecs, kRaw);
  EXPECT_EQ(lines_of(t.r.out)[1], "TIMEs               PID   PPID ARGS");
  double last = 0;
  for (const auto& r : t.rows) {
    EXPECT_TRUE(std::regex_match(r.time, std::regex("[0-9]+\\.[0-9]{6}"))) << r.time;
    double s = std::stod(r.time);
    EXPECT_GE(s, last);
    last = s;
  }
}

// The name is the new program's: "execs" matches, another name does not.
TEST_F(ExecsnoopRuntime, NameFilter) {
  auto t = trace_execs({"^exec[s]$"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  EXPECT_EQ(lines_of(t.r.out)[0],
            "Tracing exec()s issued by process name \"^exec[s]$\". Ctrl-C to end.");
  expect_rows(t, kExecs, kRaw);
  for (const auto& r : rows_of(t.r.out))
    EXPECT_NE(r.args.find("execs"), std::string::npos) << r.args;
  auto none = trace_execs({"^tracekit-no-such-program$"});
  ASSERT_EQ(none.r.exit_code, 0) << none.r.err;
  EXPECT_TRUE(rows_of(none.r.out).empty()) << none.r.out;
}

TEST_F(ExecsnoopRuntime, Buffered) {
  auto t = trace_execs({"-d", "3"}, {}, "(buffered)...\n");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, kExecs, kRaw);
  EXPECT_EQ(lines_of(t.r.out)[0], "Tracing exec()s for 3 seconds (buffered)...");
}

// Usage errors: exit 2, one line and the synopsis, nothing set up.
TEST_F(ExecsnoopRuntime, UsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-a", "0"},
                                               {"-a", "17"},
                                               {"-a", "x"},
                                               {"-d", "0"},
                                               {"("},
                                               {"a", "b"},
                                               {"-q"}}) {
    std::vector<std::string> argv{tool_path("execsnoop")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("execsnoop: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("USAGE: execsnoop [-hrt]"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  auto h = run({tool_path("execsnoop"), "-h"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_EQ(h.out.rfind("USAGE: execsnoop [-hrt] [-a argc] [-d secs] [name]\n", 0), 0u) << h.out;
}

// Two runs at once each see every exec; both clean up (TearDown checks).
// Without instances (forced off) both would trace at the top level:
// perf-tools' lock admits the first, the second is refused naming it.
TEST_F(ExecsnoopRuntime, TwoRunsAtOnce) {
  Workload w("execs", {std::to_string(kExecs), "0"});
  if (kernel::forced_off(kernel::Feature::kInstances)) {
    Running a({tool_path("execsnoop")});
    ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
    auto rb = run({tool_path("execsnoop"), "-t"}, 60);
    EXPECT_EQ(rb.exit_code, 1);
    EXPECT_NE(rb.err.find("ftrace is in use by PID " + std::to_string(a.pid())),
              std::string::npos)
        << rb.err;
    kill(w.pid(), SIGUSR1);
    ASSERT_TRUE(w.wait_line("done", 60));
    a.signal(SIGINT);
    auto ra = a.finish(60);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    long n = 0;
    for (const auto& row : rows_of(ra.out, false))
      n += row.ppid == w.pid() && row.args == child_args();
    EXPECT_EQ(n, kExecs) << ra.out.substr(0, 3000);
    return;
  }
  Running a({tool_path("execsnoop")}), b({tool_path("execsnoop"), "-t"});
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(b.wait_for_stdout("Ctrl-C to end.\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  a.signal(SIGINT);
  b.signal(SIGINT);
  auto ra = a.finish(60), rb = b.finish(60);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  for (const auto& [r, ts] : {std::pair{&ra, false}, std::pair{&rb, true}}) {
    long n = 0;
    for (const auto& row : rows_of(r->out, ts))
      n += row.ppid == w.pid() && row.args == child_args();
    EXPECT_EQ(n, kExecs) << r->out.substr(0, 3000);
  }
}

// A reader that goes away: execs keeps exec'ing, so execsnoop has lines
// to write after head has gone; it ends by itself, exit 0. Then SIGTERM
// and SIGHUP end a run as Ctrl-C does.
TEST_F(ExecsnoopRuntime, HeadAndSignals) {
  Workload loop("execs", {"100000", "0"});
  kill(loop.pid(), SIGUSR1);
  auto r =
      run({"/bin/bash", "-c", tool_path("execsnoop") + " | head -4; echo ${PIPESTATUS[0]}"}, 60);
  EXPECT_EQ(lines_of(r.out).size(), 5u) << r.out << r.err;
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "0\n") << r.out << r.err;
  for (int sig : {SIGTERM, SIGHUP}) {
    Running t({tool_path("execsnoop")});
    ASSERT_TRUE(t.wait_for_stdout("Ctrl-C to end.\n", 60));
    t.signal(sig);
    auto rs = t.finish(60);
    EXPECT_EQ(rs.exit_code, 0) << rs.err;
  }
}

// Without syscall tracepoints (raw_syscalls:sys_exit stands for them): the
// same truth.
TEST_F(ExecsnoopRuntime, ForcedToRawSyscalls) {
  std::optional<Traced> got;
  {
    ForcedFeatures forced("-kprobes,-eprobes,-syscall_tracepoints");
    got.emplace(trace_execs({}));
  }
  ASSERT_EQ(got->r.exit_code, 0) << got->r.err;
  expect_rows(*got, kExecs, kRaw);
}

// The exec functions' uprobes share one event where the kernel appends
// probes to an event and takes immediate fetch arguments (the call's index
// in a field): one kernel synchronisation when it is disabled. Without
// immediates, one event per system call; without appending, one per
// function. The same truth each way.
TEST_F(ExecsnoopRuntime, UprobesShareEventsAsTheKernelAllows) {
  const std::vector<std::pair<std::string, std::set<std::string>>> ways = {
      {"", {"c0_calls"}},
      {"-probe_immediate", {"c0_execve", "c1_execveat"}},
      {"-probe_append", {"c0_execve", "c1_execveat", "c1_fexecve"}}};
  for (const auto& [forced_off, events] : ways) {
    std::optional<Traced> got;
    {
      std::optional<ForcedFeatures> forced;
      if (!forced_off.empty()) forced.emplace(forced_off);
      got.emplace(trace_execs({}));
    }
    ASSERT_EQ(got->r.exit_code, 0) << forced_off << ": " << got->r.err;
    EXPECT_EQ(got->uprobe_events, events) << forced_off;
    expect_rows(*got, kExecs, kRaw);
  }
}

// Without any probe for the arguments: every exec still seen, with its
// arguments from /proc while the process lived, marked.
TEST_F(ExecsnoopRuntime, LastResortProcCmdline) {
  std::optional<Traced> got;
  {
    ForcedFeatures forced("-kprobes,-eprobes,-uprobes");
    got.emplace(trace_execs({}));
  }
  auto& t = *got;
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  expect_rows(t, 0, kExecs + kRaw);
  EXPECT_NE(t.r.err.find("arguments from /proc/PID/cmdline only"), std::string::npos) << t.r.err;
}

// tracekit features says by which path execsnoop works: on this kernel the
// uprobes.
TEST_F(ExecsnoopRuntime, FeaturesNamesThePath) {
  auto r = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-kprobes,-eprobes", tool_path("tracekit"),
                "features"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string line;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("execsnoop ", 0) == 0 && l.find(" - ") != std::string::npos) line = l;
  EXPECT_NE(line.find("arguments by uprobes on the C library's exec functions"), std::string::npos)
      << r.out;
}

// Arguments and a file name holding newlines and escape sequences
// (tests/workloads/hostile.c): the child's one line shows them in cat -v's
// caret form, as perf-tools' execsnoop does; no control byte reaches the
// terminal, and the newline forges no "666 1 /usr/sbin/sshd" line.
TEST_F(ExecsnoopRuntime, ControlCharactersCannotForgeLines) {
  auto h = run_against_hostile({tool_path("execsnoop")}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  const std::string args = "/tmp/tracekit-hostile." + std::to_string(h.pid) +
                           "^Jsshd child x^J   666      1 /usr/sbin/sshd ^[[2J ^[]0;t^G";
  long found = 0;
  for (const auto& l : lines_of(h.r.out)) {
    EXPECT_NE(l.rfind("   666 ", 0), 0u) << "a forged line: " << l;
    if (l.find(args) != std::string::npos) {
      ++found;
      EXPECT_EQ(l.substr(l.size() - args.size()), args) << l;
    }
  }
  EXPECT_EQ(found, 1) << h.r.out.substr(0, 3000);
}

}  // namespace
}  // namespace tracekit::testing
