// What the tools do when their output cannot keep up or fails: a failed
// write (a full disk, /dev/full) is reported and fails the run, and
// stacksnoop, streaming, stops at it; stacksnoop writing to a slow reader
// prints every event it read after Ctrl-C, whole lines only, unless a second
// Ctrl-C stops the printing, which it then counts. tracefs is as it was
// after each test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <regex>
#include <sstream>
#include <thread>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr unsigned long kSyscalls = 997;  // stackwork's getppid syscalls

// Whether process pid's main thread is blocked in write(2).
bool in_write(pid_t pid) {
  std::istringstream in(slurp("/proc/" + std::to_string(pid) + "/syscall"));
  long nr = -1;
  return (in >> nr) && nr == SYS_write;
}

// Waits until pid is blocked in write(2): its reader does not keep up.
bool wait_in_write(pid_t pid, double timeout_s) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (in_write(pid)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

unsigned long count_lines_with(const std::string& text, const std::string& what) {
  unsigned long n = 0;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line))
    if (line.find(what) != std::string::npos) ++n;
  return n;
}

// Every line of stacksnoop's output after its header is whole: the time,
// then nothing or "ip:"/"rN:" with an address and a symbol.
void expect_whole_lines(const std::string& out) {
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out.back(), '\n') << "the last line was cut";
  static const std::regex line_re(R"(\d+\.\d{9} +((ip|r\d+): [0-9a-f]+ \S.*)?)");
  std::istringstream in(out);
  std::string line;
  std::getline(in, line);  // the header
  unsigned long bad = 0;
  while (std::getline(in, line))
    if (!std::regex_match(line, line_re) && bad++ < 3)
      ADD_FAILURE() << "cut line: '" << line << "'";
}

class OutputErrorsRuntime : public TracingTest {};

// Row 4: a full disk. Each tool runs with its stdout on /dev/full, through
// sh (exec: a tool that times out is the one killed) so that the redirection
// is the shell's.
TEST_F(OutputErrorsRuntime, WriteErrorsAreReportedAndFailTheRun) {
  struct Case {
    std::string tool;
    std::string args;
  };
  const Case cases[] = {
      {"profile", "1"},
      // Folded: nothing is written before the report, and a report with
      // nothing to say writes nothing, so these trace what always happens.
      {"profile", "-f -I 1"},
      {"offcputime", "1"},
      {"stackcount", "-K -D 1 t:syscalls:sys_enter_getppid"},
      {"stackcount", "-f -K -D 1 t:sched:sched_switch"},
      // Streaming, no duration: must stop at the first failed write.
      {"stacksnoop", "t:syscalls:sys_enter_getppid"},
      {"stacksnoop", "-d 1 t:syscalls:sys_enter_getppid"},
      {"reset-tracing", ""},
      {"profile", "-h"},
  };
  for (const auto& c : cases) {
    auto start = std::chrono::steady_clock::now();
    std::string cmd = "exec " + tool_path(c.tool) + " " + c.args + " > /dev/full";
    auto r = run({"/bin/sh", "-c", cmd}, 30);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(r.timed_out) << c.tool << " " << c.args;
    EXPECT_EQ(r.exit_code, 1) << c.tool << " " << c.args << ": " << r.err;
    EXPECT_TRUE(contains(r.err, c.tool + ": error writing output: No space left on device\n"))
        << c.tool << " " << c.args << ": " << r.err;
    if (c.tool == "stacksnoop" && c.args.rfind("-d", 0) != 0) {
      EXPECT_LT(secs, 10) << "stacksnoop went on after its first failed write";
    }
    EXPECT_EQ(tracefs_snapshot(), before_) << c.tool << " " << c.args;
  }
}

// Issue 38, item 13: "profile 3 >&-". The closed fd 1 was the number of the
// first perf event the tool opened, and the report was written into it
// ("Invalid argument"). Now /dev/null stands in for a closed 0, 1 or 2, and
// a closed stdout is said at once, before any tracing: exit 1.
TEST_F(OutputErrorsRuntime, ClosedStdoutIsSaidAtOnce) {
  struct Case {
    std::string tool;
    std::string args;
  };
  const Case cases[] = {
      {"profile", "3"},
      {"profile", "-f 3"},
      {"stacksnoop", "-d 3 t:syscalls:sys_enter_getppid"},
      {"tpoint", "-d 3 sched:sched_switch"},
      {"profile", "-h"},
      {"tracekit", "-h"},
  };
  for (const auto& c : cases) {
    auto start = std::chrono::steady_clock::now();
    auto r = run({"/bin/sh", "-c", "exec " + tool_path(c.tool) + " " + c.args + " >&-"}, 30);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_FALSE(r.timed_out) << c.tool << " " << c.args;
    EXPECT_EQ(r.exit_code, 1) << c.tool << " " << c.args << ": " << r.err;
    EXPECT_EQ(r.err, c.tool + ": stdout is closed\n") << c.tool << " " << c.args;
    EXPECT_LT(secs, 2) << c.tool << " " << c.args << " traced before saying stdout is closed";
    EXPECT_EQ(tracefs_snapshot(), before_) << c.tool << " " << c.args;
  }
}

// ... and a closed stderr (or stdin) changes nothing: the report is whole on
// stdout, and the run ends as usual. Before, fd 2 was the first perf event
// or tracefs file the tool opened, and what it said on stderr went there.
TEST_F(OutputErrorsRuntime, ClosedStderrOrStdinChangesNothing) {
  Workload w("cpuratio", {"0", "wl_x"});
  for (const std::string redir : {"2>&-", "<&-", "<&- 2>&-"}) {
    auto r = run({"/bin/sh", "-c",
                  "exec " + tool_path("profile") + " -f -F 99 -p " + w.pid_str() + " 1 " + redir},
                 30);
    EXPECT_EQ(r.exit_code, 0) << redir;
    EXPECT_FALSE(parse_folded(r.out).empty()) << redir << ": " << r.out;
    for (auto& [stack, n] : parse_folded(r.out)) EXPECT_EQ(stack.rfind("wl_x;", 0), 0u) << stack;
    EXPECT_EQ(r.err, "") << redir;
    EXPECT_EQ(tracefs_snapshot(), before_) << redir;
    // A failure on a closed stderr: still its exit code.
    auto bad = run({"/bin/sh", "-c", "exec " + tool_path("profile") + " --no-such " + redir}, 30);
    EXPECT_EQ(bad.exit_code, 2) << redir;
    if (contains(redir, "2>&-")) {
      EXPECT_EQ(bad.err, "") << redir;
    }
  }
}

// Row 11: stacksnoop blocked on a reader that does not read, then Ctrl-C:
// the write that the signal interrupts is retried, tracing stops, and every
// event read is printed once the reader reads again.
TEST_F(OutputErrorsRuntime, StacksnoopPrintsEverythingToASlowReaderAfterCtrlC) {
  Workload w("stackwork");
  Running t({tool_path("stacksnoop"), "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("STACK\n", 20)) << "no header";
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  // ~1 MB of stacks for a 64 kB pipe nobody reads: it blocks.
  ASSERT_TRUE(wait_in_write(t.pid(), 20)) << "stacksnoop never blocked on its pipe";
  t.signal(SIGINT);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the reader is slow
  auto r = t.finish(60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");  // nothing lost, nothing unprinted
  EXPECT_EQ(count_lines_with(r.out, " ip: "), kSyscalls);
  expect_whole_lines(r.out);
}

// ... and a second Ctrl-C while it is blocked again stops the printing: the
// pipe holds whole lines only, and what was read but not printed is counted.
TEST_F(OutputErrorsRuntime, StacksnoopSecondCtrlCStopsPrintingAndCounts) {
  Workload w("stackwork");
  Running t({tool_path("stacksnoop"), "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("STACK\n", 20)) << "no header";
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  ASSERT_TRUE(wait_in_write(t.pid(), 20)) << "stacksnoop never blocked on its pipe";
  t.signal(SIGINT);
  // The first signal's write is retried: blocked again, not ended.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(wait_in_write(t.pid(), 20)) << "stacksnoop did not go on writing";
  t.signal(SIGINT);
  auto r = t.finish(60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::smatch m;
  static const std::regex count_re(
      R"(stacksnoop: (\d+) of the (\d+) events read were not printed\.\n)");
  ASSERT_TRUE(std::regex_search(r.err, m, count_re)) << r.err;
  unsigned long unprinted = std::stoul(m[1]), read = std::stoul(m[2]);
  EXPECT_EQ(read, kSyscalls) << "the events left in the buffer are read and counted";
  EXPECT_GT(unprinted, 0u);
  EXPECT_TRUE(contains(r.err, "stacksnoop: the output was stopped by a second signal\n")) << r.err;
  // Whole events printed, plus perhaps the first lines of the one cut short.
  unsigned long printed = count_lines_with(r.out, " ip: ");
  EXPECT_GE(printed, read - unprinted);
  EXPECT_LE(printed, read - unprinted + 1);
  expect_whole_lines(r.out);
}

}  // namespace
}  // namespace tracekit::testing
