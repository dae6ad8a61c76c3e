// stackcount and stacksnoop against a workload making known numbers of
// events from known functions (tests/workloads/stackwork.c), on this kernel:
// tracepoints and uprobes here; kprobes and the function tracer in the VM
// tier.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"
#include "kernel/features.hpp"

namespace tracekit::testing {
namespace {

constexpr unsigned long kCalls = 613;     // known_func() calls
constexpr unsigned long kSyscalls = 997;  // getppid syscalls

// stackcount's multi-line records: frames indented 2, "    comm [pid]",
// the count indented 4, a blank line.
struct CountRecord {
  std::vector<std::string> frames;
  std::string process;
  unsigned long count = 0;
};

std::vector<CountRecord> parse_counts(const std::string& text) {
  std::vector<CountRecord> recs;
  CountRecord cur;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("    ", 0) == 0) {
      std::string body = line.substr(4);
      if (!body.empty() && std::all_of(body.begin(), body.end(), ::isdigit)) {
        cur.count = std::stoul(body);
        recs.push_back(cur);
        cur = {};
      } else if (body != "--") {
        cur.process = body;
      }
    } else if (line.rfind("  ", 0) == 0) {
      cur.frames.push_back(line.substr(2));
    }
  }
  return recs;
}

unsigned long total(const std::vector<CountRecord>& recs) {
  unsigned long n = 0;
  for (auto& r : recs) n += r.count;
  return n;
}

bool has(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class StacksnoopComm : public TracingTest {};

class StackcountRuntime : public TracingTest {
 protected:
  // Runs tool with args against a fresh stackwork run; SIGINT when done.
  RunResult trace(const std::string& tool, std::vector<std::string> args, Workload& w,
                  const std::string& ready_text) {
    args.insert(args.begin(), tool_path(tool));
    Running t(args);
    if (ready_text.empty()) {
      EXPECT_TRUE(wait_for_tracing(t.pid(), 1, 20)) << "never started tracing";
    } else {
      EXPECT_TRUE(t.wait_for_stdout(ready_text, 20)) << "no header";
    }
    w.go();
    EXPECT_TRUE(w.wait_line("done", 60));
    t.signal(SIGINT);
    return t.finish(60);
  }

};

TEST_F(StackcountRuntime, TracepointCountsExactlyWithUserStacks) {
  Workload w("stackwork");
  auto r = trace("stackcount", {"-p", w.pid_str(), "t:syscalls:sys_enter_getppid"}, w,
                 "Hit Ctrl-C to end.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "Tracing 1 functions for \"t:syscalls:sys_enter_getppid\"... Hit Ctrl-C to end.");
  auto recs = parse_counts(r.out);
  EXPECT_EQ(total(recs), kSyscalls) << r.out;
  for (auto& rec : recs) {
    EXPECT_TRUE(has(rec.frames, "do_getppids")) << r.out;
    EXPECT_TRUE(has(rec.frames, "main")) << r.out;
  }
  EXPECT_NE(r.out.find("Detaching..."), std::string::npos);
}

TEST_F(StackcountRuntime, TracepointKernelStacksThroughFtrace) {
  Workload w("stackwork");
  auto r = trace("stackcount", {"-K", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"}, w,
                 "Hit Ctrl-C to end.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = parse_counts(r.out);
  EXPECT_EQ(total(recs), kSyscalls) << r.out;
  for (auto& rec : recs) {
    EXPECT_FALSE(has(rec.frames, "do_getppids")) << r.out;
    EXPECT_TRUE(has(rec.frames, "do_syscall_64")) << r.out;
  }
}

// A wildcard over both sides of a syscall: two events (without syscall
// tracepoints: raw_syscalls:sys_enter and sys_exit, each with its id
// filter), counted as two functions, through either backend.
TEST_F(StackcountRuntime, SyscallWildcardBothSidesCountsExactly) {
  for (std::vector<std::string> extra : {std::vector<std::string>{}, {"-K"}}) {
    Workload w("stackwork");
    std::vector<std::string> args = extra;
    for (const std::string& a : {std::string("-p"), w.pid_str(), std::string("t:syscalls:sys_*_getppid")})
      args.push_back(a);
    auto r = trace("stackcount", args, w, "Hit Ctrl-C to end.\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
              "Tracing 2 functions for \"t:syscalls:sys_*_getppid\"... Hit Ctrl-C to end.");
    EXPECT_EQ(total(parse_counts(r.out)), 2 * kSyscalls) << r.out;
  }
}

// Four or more syscall tracepoints on the perf backend: raw_syscalls with an
// id filter stands for them (said on stderr), counted as before, and with
// no kernel frames, as the tracepoints' own perf samples have none.
TEST_F(StackcountRuntime, ManySyscallTracepointsThroughRawSyscalls) {
  // The stand-in for tracepoints this kernel has: with them forced off (the
  // fallback pass), this would be the path of kernels without them instead.
  ForcedFeatures none("", false);
  Workload w("stackwork");
  auto r = trace("stackcount", {"-p", w.pid_str(), "t:syscalls:sys_*_getp*"}, w,
                 "Hit Ctrl-C to end.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("syscall tracepoints traced through raw_syscalls with an id filter"),
            std::string::npos)
      << r.err;
  unsigned long getppids = 0;
  for (auto& rec : parse_counts(r.out)) {
    EXPECT_FALSE(has(rec.frames, "do_syscall_64")) << r.out;
    if (has(rec.frames, "do_getppids")) getppids += rec.count;
  }
  EXPECT_EQ(getppids, 2 * kSyscalls) << r.out;  // both sides
}

// A 32-bit process's system calls enter a 64-bit kernel through its compat
// entry, numbered as i386 numbers them: raw_syscalls fires for them, the
// syscalls:* tracepoints never do. The stand-in drops their samples (by
// the sample's register ABI), so it reports what the tracepoints would:
// nothing, where it counted 1,002 under x86-64's numbers (i386 getppid is
// x86-64's semget) before.
TEST_F(StackcountRuntime, RawSyscallsStandInLeavesOut32BitProcesses) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "compat32 is 32-bit x86 code";
#else
  ForcedFeatures none("", false);  // the stand-in for tracepoints this kernel has
  auto probe = run({workload_path("compat32")}, 10);
  if (probe.exit_code != 0)
    GTEST_SKIP() << "this kernel runs no 32-bit x86 programs (IA32 emulation): exit "
                 << probe.exit_code << " " << probe.err;
  for (const char* spec : {"t:syscalls:sys_enter_*", "t:syscalls:sys_enter_getppid"}) {
    SCOPED_TRACE(spec);
    Workload w("compat32");
    auto r = trace("stackcount", {"-p", w.pid_str(), spec}, w, "Hit Ctrl-C to end.\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(total(parse_counts(r.out)), 0u) << r.out << r.err;
  }
#endif
}

TEST_F(StackcountRuntime, UprobeCountsExactlyAndUserStackHasCaller) {
  Workload w("stackwork");
  auto r = trace("stackcount", {"-U", "-p", w.pid_str(), workload_path("stackwork") + ":known_func"},
                 w, "Hit Ctrl-C to end.\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = parse_counts(r.out);
  EXPECT_EQ(total(recs), kCalls) << r.out;
  for (auto& rec : recs) {
    ASSERT_FALSE(rec.frames.empty());
    EXPECT_EQ(rec.frames[0], "known_func") << r.out;
    EXPECT_TRUE(has(rec.frames, "call_known")) << r.out;
  }
}

TEST_F(StackcountRuntime, PerProcessFoldedAndFilterKeepsOthersOut) {
  Workload w("stackwork");
  Workload other("stackwork");
  other.go();  // the other process makes the same events, unfiltered
  auto r = trace("stackcount", {"-P", "-f", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"}, w,
                 "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long n = 0;
  for (auto& [stack, count] : parse_folded(r.out)) {
    EXPECT_EQ(frames_of(stack)[0], "stackwork") << stack;
    n += count;
  }
  EXPECT_EQ(n, kSyscalls) << r.out;
}

// -P with -p still shows each stack's process: "    stackwork [PID]", through
// either backend.
TEST_F(StackcountRuntime, PerProcessWithPidKeepsTheProcessLine) {
  for (std::vector<std::string> extra : {std::vector<std::string>{}, {"-K"}}) {
    Workload w("stackwork");
    std::vector<std::string> args = extra;
    for (const char* a : {"-P", "-p"}) args.push_back(a);
    args.push_back(w.pid_str());
    args.push_back("t:syscalls:sys_enter_getppid");
    auto r = trace("stackcount", args, w, "Hit Ctrl-C to end.\n");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto recs = parse_counts(r.out);
    ASSERT_FALSE(recs.empty()) << r.out;
    for (auto& rec : recs) EXPECT_EQ(rec.process, "stackwork [" + w.pid_str() + "]") << r.out;
    EXPECT_EQ(total(recs), kSyscalls) << r.out;
  }
}

TEST_F(StackcountRuntime, TwoRunsAtOnceBothCountExactly) {
  Workload w("stackwork");
  std::vector<std::string> args{tool_path("stackcount"), "-K", "-p", w.pid_str(),
                                "t:syscalls:sys_enter_getppid"};
  Running a(args);
  ASSERT_TRUE(a.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  if (kernel::forced_off(kernel::Feature::kInstances)) {
    // Without instances both would trace at the top level: perf-tools' lock
    // admits one, the other is refused naming the holder.
    auto refused = run(args, 30);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("ftrace is in use by PID " + std::to_string(a.pid())),
              std::string::npos)
        << refused.err;
    w.go();
    ASSERT_TRUE(w.wait_line("done", 60));
    a.signal(SIGINT);
    auto ra = a.finish(60);
    EXPECT_EQ(total(parse_counts(ra.out)), kSyscalls) << ra.out << ra.err;
    return;
  }
  Running b(args);
  ASSERT_TRUE(b.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  a.signal(SIGINT);
  b.signal(SIGINT);
  auto ra = a.finish(60), rb = b.finish(60);
  EXPECT_EQ(total(parse_counts(ra.out)), kSyscalls) << ra.out << ra.err;
  EXPECT_EQ(total(parse_counts(rb.out)), kSyscalls) << rb.out << rb.err;
}

TEST_F(StackcountRuntime, StacksnoopBufferedPrintsEveryStack) {
  Workload w("stackwork");
  Running t({tool_path("stacksnoop"), "-d", "3", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("(buffered)...\n", 20));
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long stacks = 0, frames = 0;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(" ip: ") != std::string::npos) ++stacks;
    if (line.find("do_syscall_64") != std::string::npos) ++frames;
  }
  EXPECT_EQ(stacks, kSyscalls) << r.out.substr(0, 3000);
  EXPECT_EQ(frames, kSyscalls);
}

// Issue 38: stacksnoop -v printed COMM "<...>" for a process that had
// exited by the time its events were printed, where tpoint named it from
// the kernel's saved_cmdlines.
TEST_F(StacksnoopComm, ExitedProcessIsNamedFromSavedCmdlines) {
  std::optional<Workload> w(std::in_place, "stackwork", std::vector<std::string>{"1", "5"});
  const std::string pid = w->pid_str();
  Running t({tool_path("stacksnoop"), "-v", "-d", "30", "-p", pid, "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("(buffered)...\n", 20));
  w->go();
  ASSERT_TRUE(w->wait_line("done", 60));
  w.reset();  // killed and reaped: only the kernel knows its name now
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long stacks = 0;
  for (auto& line : lines_of(r.out))
    if (line.find(" ip: ") != std::string::npos) {
      ++stacks;
      std::istringstream fields(line);
      std::string time, comm, event_pid;
      fields >> time >> comm >> event_pid;
      EXPECT_EQ(comm + " " + event_pid, "stackwork " + pid) << line;
    }
  EXPECT_EQ(stacks, 5u) << r.out;
}

// Issue 38: under overflow stacksnoop -d warned of the records lost (an
// event and its stack: 254,591 for 127,295 events), and printed its last
// event without a stack unexplained. 400,000 events into an 8 MB buffer:
// the events printed and the events lost add up to them exactly.
TEST_F(StacksnoopComm, LostEventsAreCountedAsEvents) {
  constexpr unsigned long kEvents = 400000;
  Workload w("getppid_n", {std::to_string(kEvents)});
  w.pin(1 % static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  Running t({tool_path("stacksnoop"), "-d", "60", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("(buffered)...\n", 20));
  w.go();
  ASSERT_TRUE(w.wait_line("done", 120));
  t.signal(SIGINT);
  auto r = t.finish(120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Each event: a line holding its time, then one line per frame.
  unsigned long printed = 0, stacks = 0;
  for (auto& line : lines_of(r.out)) {
    std::istringstream fields(line);
    std::string time, what;
    fields >> time >> what;
    if (time.empty() || !std::isdigit(static_cast<unsigned char>(time[0]))) continue;
    if (what.empty()) ++printed;
    if (what == "ip:") ++stacks;
  }
  const unsigned long stackless = printed - stacks;
  unsigned long lost = 0;
  const std::string warning = "WARNING: ";
  if (auto at = r.err.find(warning); at != std::string::npos)
    lost = std::stoul(r.err.substr(at + warning.size()));
  ASSERT_GT(lost, 0u) << "the buffer should have overflowed\n" << r.err;
  EXPECT_EQ(printed + lost, kEvents) << printed << " printed, " << stackless << " stackless\n" << r.err;
  if (stackless) {
    EXPECT_NE(r.err.find(std::to_string(stackless) + " event"), std::string::npos) << r.err;
  }
}

// Issue 38: stacksnoop -p PID on a kernel function, where the kernel has
// no kprobes and refuses the function tracer, failed with a raw "cannot
// write PID: .../set_ftrace_pid: Operation not permitted": the refusal
// names the function tracer, as it does without -p.
TEST_F(StacksnoopComm, RefusedFunctionTracerUnderPidIsNamed) {
  auto& features = kernel::Features::host();
  if (features.has(kernel::Feature::kKprobes) || features.has(kernel::Feature::kFunctionTracer))
    GTEST_SKIP() << "needs a kernel without kprobes that refuses the function tracer";
  Workload w("stackwork");
  for (bool with_pid : {true, false}) {
    std::vector<std::string> args{tool_path("stacksnoop")};
    if (with_pid) args.insert(args.end(), {"-p", w.pid_str()});
    args.push_back("vfs_read");
    auto r = run(args, 30);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("stacksnoop: the kernel refuses the function tracer: "), std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("forbids function tracing here"), std::string::npos) << r.err;
  }
}

TEST_F(StackcountRuntime, StacksnoopLiveVerbose) {
  Workload w("stackwork", {"1", "5"});
  auto r = trace("stacksnoop", {"-v", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"}, w,
                 "STACK\n");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("TIME(s)            COMM         PID    CPU STACK\n", 0), 0u) << r.out;
  unsigned long stacks = 0;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.find(" ip: ") != std::string::npos) {
      ++stacks;
      EXPECT_NE(line.find(" stackwork "), std::string::npos) << line;
    }
  EXPECT_EQ(stacks, 5u) << r.out;
}

// Ctrl-C, SIGTERM and a closed pipe end a run with tracefs as it was (the
// fixture checks the snapshot after every test).
TEST_F(StackcountRuntime, SignalsAndClosedPipeLeaveTracefsClean) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    Workload w("stackwork");
    Running t({tool_path("stackcount"), "-K", "t:syscalls:sys_enter_getppid"});
    ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
    w.go();
    ASSERT_TRUE(w.wait_line("done", 60));
    t.signal(sig);
    auto r = t.finish(60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(tracefs_snapshot(), before_) << "after signal " << sig;
  }
  // A reader that goes away: syscalls makes getppid calls until killed, so
  // stacksnoop has lines to write after head has gone.
  Workload loop("syscalls");
  auto r = run({"/bin/bash", "-c",
                tool_path("stacksnoop") + " -p " + loop.pid_str() +
                    " t:syscalls:sys_enter_getppid | head -2; echo ${PIPESTATUS[0]}"},
               60);
  EXPECT_EQ(r.out.substr(r.out.rfind('\n', r.out.size() - 2) + 1), "0\n") << r.out << r.err;
}

TEST_F(StackcountRuntime, LeftoversOfAKilledRunAreRemovedByTheNext) {
  Workload w("stackwork");
  Running killed({tool_path("stackcount"), "-K", workload_path("stackwork") + ":known_func"});
  ASSERT_TRUE(killed.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  killed.signal(SIGKILL);
  killed.finish(10);
  EXPECT_NE(tracefs_snapshot(), before_) << "a SIGKILLed run should leave its instance";
  auto r = run({tool_path("stackcount"), "-K", "-D", "1", "t:syscalls:sys_enter_getppid"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(tracefs_snapshot(), before_) << "the next run must remove the leftovers";
}

struct BadInput {
  std::vector<std::string> args;
  int exit_code;
  std::string message;
};

TEST_F(StackcountRuntime, BadInputIsRejectedClearly) {
  const BadInput cases[] = {
      {{"no_such_function_xyz"},
       1,
       "stackcount: 0 functions matched by \"no_such_function_xyz\". Exiting."},
      {{"t:nosuch:event"}, 1, "stackcount: 0 tracepoints matched by \"t:nosuch:event\". Exiting."},
      {{"t:sched"}, 2, "stackcount: "},
      {{"/no/such/lib:func"}, 1, "/no/such/lib"},
      {{"-r", "vfs_(read"}, 2, "vfs_(read"},
      {{"-K", "-U", "t:sched:sched_switch"}, 2, "-K and -U"},
      {{"u:c:probe"}, 1, "USDT"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{tool_path("stackcount")};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv, 30);
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.exit_code, c.exit_code) << first;
    EXPECT_NE(first.find(c.message), std::string::npos) << first;
    EXPECT_EQ(tracefs_snapshot(), before_) << first;
  }
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// A uprobe in processes that have exited before stackcount reads their
// events: counted, named (-P) and symbolized from COMM and MMAP2 records.
TEST_F(StackcountRuntime, ShortLivedProcessesResolve) {
  Running t({tool_path("stackcount"), "-P", workload_path("shortlived") + ":shortlived_burn"});
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  for (int i = 0; i < 3; ++i) ASSERT_EQ(run({workload_path("shortlived"), "5"}, 30).exit_code, 0);
  t.signal(SIGINT);
  auto r = t.finish(30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto recs = parse_counts(r.out);
  EXPECT_EQ(total(recs), 3u) << r.out;
  for (auto& rec : recs) {
    ASSERT_GE(rec.frames.size(), 2u) << r.out;
    EXPECT_EQ(rec.frames[0], "shortlived_burn") << r.out;
    EXPECT_EQ(rec.frames[1], "main") << r.out;
    EXPECT_EQ(rec.process.rfind("shortlived [", 0), 0u) << r.out;
  }
}

// Issue 38: a process that existed before stackcount started and exited
// before its samples were read (the reader drains every 250 ms, so its
// last samples are read after the exit) printed "[unknown] [PID]", its
// user frames "[unknown]", and the hint blamed missing frame pointers.
// Its name is read at the start (-P); with -p, its mappings too.
TEST_F(StackcountRuntime, ProcessThatExitsBeforeItsSamplesAreReadIsNamed) {
  for (bool with_pid : {true, false}) {
    std::optional<Workload> w(std::in_place, "getppid_n", std::vector<std::string>{"777"});
    const std::string pid = w->pid_str();
    std::vector<std::string> args{tool_path("stackcount"), "-P"};
    if (with_pid) args.insert(args.end(), {"-p", pid});
    args.push_back("t:syscalls:sys_enter_getppid");
    Running t(args);
    ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
    w->go();
    ASSERT_TRUE(w->wait_line("done", 60));
    w.reset();  // killed and reaped
    t.signal(SIGINT);
    auto r = t.finish(60);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    unsigned long n = 0;
    for (auto& rec : parse_counts(r.out)) {
      if (rec.process.find("[" + pid + "]") == std::string::npos) continue;
      n += rec.count;
      EXPECT_EQ(rec.process, "getppid_n [" + pid + "]") << r.out;
      if (with_pid) {
        EXPECT_TRUE(has(rec.frames, "do_getppids")) << r.out;
        EXPECT_TRUE(has(rec.frames, "main")) << r.out;
      }
    }
    EXPECT_EQ(n, 777u) << r.out;
    EXPECT_EQ(r.err.find("frame pointers"), std::string::npos) << r.err;
  }
}

// Issue 38 (item 11, as stacksnoop): the ftrace backend's lost events were
// ring records (an event and its stack: two). The reader is stopped while
// 400,000 events overflow its buffer: counted and lost add up to them.
TEST_F(StackcountRuntime, FtraceLostEventsAreCountedAsEvents) {
  constexpr unsigned long kEvents = 400000;
  Workload w("getppid_n", {std::to_string(kEvents)});
  w.pin(1 % static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  Running t({tool_path("stackcount"), "-K", "-p", w.pid_str(), "t:syscalls:sys_enter_getppid"});
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  t.signal(SIGSTOP);
  w.go();
  ASSERT_TRUE(w.wait_line("done", 120));
  t.signal(SIGCONT);
  t.signal(SIGINT);
  auto r = t.finish(120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long lost = 0;
  const std::string warning = "WARNING: ";
  if (auto at = r.err.find(warning); at != std::string::npos)
    lost = std::stoul(r.err.substr(at + warning.size()));
  ASSERT_GT(lost, 0u) << "the buffer should have overflowed\n" << r.err;
  EXPECT_EQ(total(parse_counts(r.out)) + lost, kEvents) << r.out << r.err;
}

// Issue 38: under -P, 59-124 of 1,378-4,008 sched_switch stacks were
// "[unknown] [PID]": a new process's samples read before the FORK and COMM
// records naming it (on another CPU's ring), when /proc no longer had it.
// Every stack of the 200 short-lived processes started here is named.
TEST_F(StackcountRuntime, ShortLivedProcessesSwitchingAreNamed) {
  Running t({tool_path("stackcount"), "-P", "t:sched:sched_switch"});
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
  auto children = run({"/bin/sh", "-c", "for i in $(seq 200); do /bin/true & echo $!; wait; done"}, 60);
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(children.exit_code, 0);
  std::set<std::string> pids;
  for (auto& line : lines_of(children.out)) pids.insert(line);
  ASSERT_EQ(pids.size(), 200u);
  unsigned long named = 0;
  for (auto& rec : parse_counts(r.out)) {
    auto open = rec.process.rfind(" [");
    if (open == std::string::npos) continue;
    std::string pid = rec.process.substr(open + 2, rec.process.size() - open - 3);
    if (!pids.count(pid)) continue;
    // Forked by sh, then exec'd: either name, never "[unknown]".
    std::string comm = rec.process.substr(0, open);
    EXPECT_TRUE(comm == "true" || comm == "sh") << rec.process << "\n" << r.out;
    named += rec.count;
  }
  EXPECT_GE(named, 200u) << r.out;  // each switched out at least as it exited
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// -c keeps one CPU's events, in both backends: the workload runs on CPU 1.
TEST_F(StackcountRuntime, CpuFilterKeepsOneCpu) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  for (const char* backend : {"ftrace", "perf"}) {
    for (const char* cpu : {"0", "1"}) {
      Workload w("stackwork");
      w.pin(1);
      auto r = trace("stackcount",
                     {"--backend", backend, "-K", "-c", cpu, "-p", w.pid_str(),
                      "t:syscalls:sys_enter_getppid"},
                     w, "Hit Ctrl-C to end.\n");
      ASSERT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(total(parse_counts(r.out)), std::string(cpu) == "1" ? kSyscalls : 0u)
          << backend << " -c " << cpu << "\n" << r.out;
    }
  }
}

// -i prints a summary every interval (and resets the counts); -T stamps it.
TEST_F(StackcountRuntime, IntervalSummariesWithTimestamps) {
  Workload w("syscalls");
  auto r = run({tool_path("stackcount"), "-K", "-T", "-i", "1", "-D", "2.5", "-p", w.pid_str(),
                "t:syscalls:sys_enter_getppid"},
               30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long stamps = 0;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line))
    if (line.size() == 8 && line[2] == ':' && line[5] == ':') ++stamps;
  EXPECT_EQ(stamps, 3u) << r.out;  // at 1 s, at 2 s, and the rest at the end
  EXPECT_GE(parse_counts(r.out).size(), 3u) << r.out;
  EXPECT_NE(r.out.find("Detaching..."), std::string::npos);
}

// -o: the folded file is the folded output of the same run, exact counts.
TEST_F(StackcountRuntime, OutputFileHoldsTheSameCounts) {
  Workload w("stackwork");
  TempDir dir;
  auto r = trace("stackcount",
                 {"-f", "-p", w.pid_str(), "-o", dir / "s.folded", "-o", dir / "s.json", "-o",
                  dir / "s.speedscope.json", "t:syscalls:sys_enter_getppid"},
                 w, "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long n = 0;
  for (auto& [stack, count] : parse_folded(r.out)) n += count;
  EXPECT_EQ(n, kSyscalls) << r.out;
  EXPECT_EQ(slurp(dir / "s.folded"), r.out);
  // The same total in every format (speedscope: events, unit "none").
  std::string total = std::to_string(kSyscalls);
  EXPECT_TRUE(contains(slurp(dir / "s.json"), "\"total_value\": " + total + ",\n"))
      << slurp(dir / "s.json");
  EXPECT_TRUE(contains(slurp(dir / "s.json"), "\"name\": \"do_getppids\""));
  EXPECT_TRUE(contains(slurp(dir / "s.speedscope.json"), "\"endValue\": " + total + ",\n"))
      << slurp(dir / "s.speedscope.json");
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"s.folded", "s.json", "s.speedscope.json"}));
}

// The caller of a probed user function's entry (issue 16): tests/workloads/
// callers.c calls fp_leaf (push %rbp first: Linux 6.11 and later add the
// caller themselves) and nofp_leaf (no frame pointer: the kernel never does)
// kCallersN times from main and kCallersM times from g_fp/g_nofp, and
// malloc (Debian's libc: no frame pointers) from alloc_a and alloc_b.
constexpr unsigned long kCallersN = 709, kCallersM = 421;

class StackcountEntryCaller : public StackcountRuntime {
 protected:
  // stackcount args -p PID SPEC on a fresh callers run, its "go" a SIGUSR1
  // (a read of stdin could malloc).
  RunResult callers(std::vector<std::string> args, const std::string& spec) {
    Workload w("callers");
    args.insert(args.begin(), tool_path("stackcount"));
    args.insert(args.end(), {"-p", w.pid_str(), spec});
    Running t(args);
    EXPECT_TRUE(wait_for_tracing(t.pid(), 1, 20)) << "never started tracing";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60));
    t.signal(SIGINT);
    return t.finish(60);
  }

  // Folded user stacks (-U) of spec: exactly two, leaf `leaf` called from
  // first kCallersN times and from second kCallersM times.
  void expect_two_callers(const std::vector<std::string>& extra, const std::string& spec,
                          const std::string& leaf, const std::string& first,
                          const std::string& second) {
    std::vector<std::string> args{"-U", "-f"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = callers(args, spec);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto folded = parse_folded(r.out);
    ASSERT_EQ(folded.size(), 2u) << r.out;
    std::map<std::string, unsigned long> by_caller;
    for (auto& [stack, count] : folded) {
      auto frames = frames_of(stack);
      ASSERT_GE(frames.size(), 2u) << r.out;
      EXPECT_EQ(frames.back(), leaf) << r.out;
      by_caller[frames[frames.size() - 2]] += count;
    }
    EXPECT_EQ(by_caller, (std::map<std::string, unsigned long>{{first, kCallersN}, {second, kCallersM}}))
        << r.out;

    // The same in multi-line output, leaf first.
    args.erase(std::find(args.begin(), args.end(), "-f"));
    r = callers(args, spec);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto recs = parse_counts(r.out);
    ASSERT_EQ(recs.size(), 2u) << r.out;
    by_caller.clear();
    for (auto& rec : recs) {
      ASSERT_GE(rec.frames.size(), 2u) << r.out;
      EXPECT_EQ(rec.frames[0], leaf) << r.out;
      by_caller[rec.frames[1]] += rec.count;
    }
    EXPECT_EQ(by_caller, (std::map<std::string, unsigned long>{{first, kCallersN}, {second, kCallersM}}))
        << r.out;
  }
};

TEST_F(StackcountEntryCaller, FramePointerFunctionNamesItsCallers) {
  expect_two_callers({}, workload_path("callers") + ":fp_leaf", "fp_leaf", "main", "g_fp");
}

TEST_F(StackcountEntryCaller, FunctionWithoutFramePointerNamesItsCallers) {
  expect_two_callers({}, workload_path("callers") + ":nofp_leaf", "nofp_leaf", "main", "g_nofp");
}

TEST_F(StackcountEntryCaller, MallocNamesItsCallers) {
  expect_two_callers({}, "c:malloc", "malloc", "alloc_a", "alloc_b");
}

// Both kinds in one run: each function's rule is its own.
TEST_F(StackcountEntryCaller, BothKindsInOneRun) {
  auto r = callers({"-U", "-f"}, workload_path("callers") + ":*_leaf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, unsigned long> tails;
  for (auto& [stack, count] : parse_folded(r.out)) {
    auto frames = frames_of(stack);
    ASSERT_GE(frames.size(), 2u) << r.out;
    tails[frames[frames.size() - 2] + ";" + frames.back()] += count;
  }
  EXPECT_EQ(tails, (std::map<std::string, unsigned long>{{"main;fp_leaf", kCallersN},
                                                         {"g_fp;fp_leaf", kCallersM},
                                                         {"main;nofp_leaf", kCallersN},
                                                         {"g_nofp;nofp_leaf", kCallersM}}))
      << r.out;
}

// --call-graph dwarf: the CFI at a function's entry gives the caller by
// construction (2 KiB of stack: 8 KiB samples of 1130 calls would fill the
// 4 MiB ring before the reader empties it).
TEST_F(StackcountEntryCaller, DwarfNamesTheCallers) {
  expect_two_callers({"--call-graph", "dwarf,2048"}, workload_path("callers") + ":fp_leaf",
                     "fp_leaf", "main", "g_fp");
  expect_two_callers({"--call-graph", "dwarf,2048"}, workload_path("callers") + ":nofp_leaf",
                     "nofp_leaf", "main", "g_nofp");
  expect_two_callers({"--call-graph", "dwarf,2048"}, "c:malloc", "malloc", "alloc_a", "alloc_b");
}

// --call-graph dwarf with the largest stack sample: 1,130 samples of 64 KiB
// overflow the 4 MiB ring, and the burst is the run's last work, so the
// kernel writes no PERF_RECORD_LOST for what it dropped (it writes one only
// at the ring's next successful write). The events' own lost counts
// (PERF_FORMAT_LOST, 6.0+) say it: what is counted plus what is reported
// lost is every call (before, 64 were counted and nothing was said).
TEST_F(StackcountEntryCaller, DwarfSamplesLostAtTheEndAreReported) {
  auto r = callers({"-U", "-f", "--call-graph", "dwarf,65528"},
                   workload_path("callers") + ":fp_leaf");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long counted = 0, lost = 0;
  for (auto& [stack, count] : parse_folded(r.out)) counted += count;
  const std::string warning = "WARNING: ";
  if (auto at = r.err.find(warning); at != std::string::npos)
    lost = std::stoul(r.err.substr(at + warning.size()));
  EXPECT_GE(counted + lost, kCallersN + kCallersM) << r.out << r.err;
  if (counted < kCallersN + kCallersM) {
    EXPECT_TRUE(contains(r.err, " events lost: the kernel buffer was full")) << r.err;
  }
}

// Without perf user stack samples: the frame-pointer stacks as they were
// (malloc's callers skipped), and one line saying so.
TEST_F(StackcountEntryCaller, WithoutUserStackSamplesSaysCallersAreMissing) {
  ForcedFeatures off("-user_stack");
  auto r = callers({"-U", "-f"}, "c:malloc");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err,
            "stackcount: the callers of the probed functions are missing from the user stacks: "
            "perf user register and stack samples (PERF_SAMPLE_REGS_USER, "
            "PERF_SAMPLE_STACK_USER) turned off by TRACEKIT_KERNEL_FEATURES\n");
  auto folded = parse_folded(r.out);
  unsigned long n = 0;
  for (auto& [stack, count] : folded) {
    auto frames = frames_of(stack);
    ASSERT_GE(frames.size(), 2u) << r.out;
    EXPECT_EQ(frames.back(), "malloc") << r.out;
    EXPECT_EQ(frames[frames.size() - 2], "main") << r.out;
    n += count;
  }
  EXPECT_EQ(n, kCallersN + kCallersM) << r.out;
}

}  // namespace
}  // namespace tracekit::testing
