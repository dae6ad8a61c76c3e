// -p follows every thread of a process, threads started after tracing began
// included, and none of its child processes: stackcount (perf and ftrace
// backends, tracepoint and uprobe), stacksnoop and offcputime against
// tests/workloads/threads.c, whose threads all start after the "go". And -p
// of a process that does not exist is refused.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// threads.c: getppid calls of its threads A, B and C (the children make
// 3988 more), and their time asleep in thread_sleep (the children sleep
// 1380 ms more).
constexpr unsigned long kThreadCalls = 211 + 307 + 401;
constexpr double kThreadSleepUs = 2 * 23 * 20000;

// The sum of stackcount's counts: the lines that hold only a number, after
// 4 spaces (multi-line output).
unsigned long total_count(const std::string& out) {
  unsigned long n = 0;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("    ", 0) != 0) continue;
    std::string body = line.substr(4);
    if (!body.empty() && std::all_of(body.begin(), body.end(), ::isdigit)) n += std::stoul(body);
  }
  return n;
}

// What the tool run as pid left in tracefs: its instances and probe groups
// are named tracekit_<pid>. Other runs (other worktrees' tests share this
// machine's tracefs, and the tools sweep the leftovers of killed runs) are
// not looked at.
std::vector<std::string> left_by(pid_t pid) {
  std::vector<std::string> left;
  const std::string name = "tracekit_" + std::to_string(pid);
  for (auto& o : tracefs_objects("/sys/kernel/tracing", {static_cast<int>(pid)}))
    if (o.find(name + "_") != std::string::npos || o.find(name + "/") != std::string::npos)
      left.push_back(o);
  return left;
}

std::string pid_beyond_max() {
  std::ifstream f("/proc/sys/kernel/pid_max");
  long pid_max = 4194304;
  f >> pid_max;
  return std::to_string(pid_max + 1);  // no process can have it
}

class FollowThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs and perf_event_open";
  }

  // Starts the tool in args (with "PID" replaced by the PID of a fresh
  // threads workload), waits until it traces (ready_text on stdout; when
  // ready_text is empty, perf_fds perf events open and the main loop in
  // poll), lets the workload run, then SIGINT.
  RunResult trace(std::vector<std::string> args, const std::string& ready_text,
                  int perf_fds = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)),
                  const std::vector<std::string>& workload_args = {}) {
    Workload w("threads", workload_args);
    for (auto& a : args)
      if (a == "PID") a = w.pid_str();
    Running t(args);
    if (ready_text.empty()) {
      EXPECT_TRUE(wait_for_tracing(t.pid(), perf_fds, 60)) << "never started tracing";
    } else {
      EXPECT_TRUE(t.wait_for_stdout(ready_text, 60)) << "no header";
    }
    kill(w.pid(), SIGUSR1);
    // Read the tool's output meanwhile: stacksnoop prints as it goes, and a
    // tool blocked on a full pipe would have that write(2) cut short by the
    // SIGINT below (its stdout then fails, and the rest is lost).
    bool done = false;
    for (int i = 0; i < 600 && !done; ++i) {
      done = w.wait_line("done", 0.05);
      (void)t.wait_for_stdout("\x01", 0.05);  // never printed: reads for 50 ms
    }
    EXPECT_TRUE(done) << "the workload did not finish";
    t.signal(SIGINT);
    auto r = t.finish(60);
    EXPECT_EQ(left_by(t.pid()), std::vector<std::string>{}) << "tracefs was left changed";
    return r;
  }
};

const std::string kHeader = "Hit Ctrl-C to end.\n";

TEST_F(FollowThreads, StackcountPerfCountsNewThreadsNotChildren) {
  auto r = trace({tool_path("stackcount"), "-p", "PID", "t:syscalls:sys_enter_getppid"}, kHeader);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(total_count(r.out), kThreadCalls) << r.out;
  EXPECT_NE(r.out.find("  make_calls\n"), std::string::npos) << r.out;
}

TEST_F(FollowThreads, StackcountFtraceCountsNewThreadsNotChildren) {
  auto r = trace(
      {tool_path("stackcount"), "--backend", "ftrace", "-p", "PID", "t:syscalls:sys_enter_getppid"},
      kHeader);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(total_count(r.out), kThreadCalls) << r.out;
  EXPECT_NE(r.out.find("do_syscall_64"), std::string::npos) << r.out;
}

TEST_F(FollowThreads, StackcountUprobeBothBackends) {
  const std::string probe = workload_path("threads") + ":one_getppid";
  auto perf = trace({tool_path("stackcount"), "-U", "-p", "PID", probe}, kHeader);
  ASSERT_EQ(perf.exit_code, 0) << perf.err;
  EXPECT_EQ(total_count(perf.out), kThreadCalls) << perf.out;
  EXPECT_NE(perf.out.find("  make_calls\n"), std::string::npos) << perf.out;

  auto ftrace = trace({tool_path("stackcount"), "-K", "-p", "PID", probe}, kHeader);
  ASSERT_EQ(ftrace.exit_code, 0) << ftrace.err;
  EXPECT_EQ(total_count(ftrace.out), kThreadCalls) << ftrace.out;
}

// -P names the process: every count is the traced process's.
TEST_F(FollowThreads, StackcountPerProcessShowsOnlyTheProcess) {
  for (const char* backend : {"perf", "ftrace"}) {
    bool perf = std::string(backend) == "perf";
    auto r = trace({tool_path("stackcount"), "--backend", backend, "-K", "-P", "-f", "-p", "PID",
                    "t:syscalls:sys_enter_getppid"},
                   "", perf ? static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) : 0);
    ASSERT_EQ(r.exit_code, 0) << backend << ": " << r.err;
    unsigned long n = 0;
    for (auto& [stack, count] : parse_folded(r.out)) {
      EXPECT_EQ(frames_of(stack)[0], "threads") << backend << ": " << stack;
      n += count;
    }
    EXPECT_EQ(n, kThreadCalls) << backend << ": " << r.out;
  }
}

TEST_F(FollowThreads, StacksnoopPrintsNewThreadsEvents) {
  for (bool buffered : {false, true}) {
    std::vector<std::string> args{tool_path("stacksnoop"), "-v", "-p", "PID",
                                  "t:syscalls:sys_enter_getppid"};
    if (buffered) args.insert(args.begin() + 1, {"-d", "4"});
    auto r = trace(args, buffered ? "(buffered)...\n" : "STACK\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    unsigned long stacks = 0;
    std::map<std::string, unsigned long> by_tid;  // -v: TIME COMM PID CPU ip: ...
    std::istringstream in(r.out);
    std::string line;
    while (std::getline(in, line))
      if (line.find(" ip: ") != std::string::npos) {
        ++stacks;
        std::istringstream fields(line);
        std::string time, comm, tid;
        fields >> time >> comm >> tid;
        ++by_tid[tid];
      }
    std::string tids;
    for (auto& [tid, n] : by_tid) tids += " " + tid + ":" + std::to_string(n);
    EXPECT_EQ(stacks, kThreadCalls)
        << (buffered ? "buffered" : "live") << ", by thread" << tids << "\n"
        << r.err;
  }
}

// The truth is the wall time A and C spent in thread_sleep as they measured
// it (at least the 920 ms they asked for): on a busy machine a thread waits
// for a CPU after each sleep, and that is off-CPU time too.
TEST_F(FollowThreads, OffcputimeCountsNewThreadsBlockedTime) {
  char path[] = "/tmp/tracekit_slept_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  auto r = trace({tool_path("offcputime"), "-f", "-p", "PID"}, "",
                 static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), {path});
  double slept = std::atof(slurp(path).c_str());
  unlink(path);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_GE(slept, kThreadSleepUs);
  double us = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    EXPECT_EQ(fr[0], "threads") << stack;
    if (std::find(fr.begin(), fr.end(), "thread_sleep") != fr.end()) us += static_cast<double>(n);
  }
  EXPECT_NEAR(us, slept, slept * 0.10) << r.out;
}

TEST_F(FollowThreads, DeadPidIsRefused) {
  const std::string dead = pid_beyond_max();
  const std::vector<std::vector<std::string>> cases = {
      {tool_path("stackcount"), "-p", dead, "t:syscalls:sys_enter_getppid"},
      {tool_path("stackcount"), "--backend", "ftrace", "-p", dead, "t:syscalls:sys_enter_getppid"},
      {tool_path("stacksnoop"), "-p", dead, "t:sched:sched_switch"},
      {tool_path("stacksnoop"), "-d", "1", "-p", dead, "t:sched:sched_switch"},
  };
  for (const auto& argv : cases) {
    Running t(argv);
    auto r = t.finish(30);
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.exit_code, 1) << argv[0] << ": " << first;
    EXPECT_NE(first.find("no process with PID " + dead), std::string::npos) << first;
    EXPECT_TRUE(r.out.empty()) << r.out.substr(0, 500);
    EXPECT_EQ(left_by(t.pid()), std::vector<std::string>{}) << argv[0];
  }
}

}  // namespace
}  // namespace tracekit::testing
