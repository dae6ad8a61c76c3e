// funccount on this kernel: tracepoints counted by perf counters, and many
// of them in the run's instance (exact, for one process, in intervals, the
// top N; without instances, perf counters), and kernel functions, which
// this kernel cannot count (no kprobes, the function tracer refused, no
// profiler), refused clearly. The kernel-function ways are tested for real
// in the VM tier (tests/vm/funccount.sh).
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "harness.hpp"
#include "tracefs/leftovers.hpp"
#include "util/strings.hpp"

namespace tracekit::testing {
namespace {

constexpr long kReads = 997;

class FunccountRuntime : public TracingTest {
 protected:
  // Runs funccount with args ("PID": the reads workload's) while the
  // workload makes n reads; -d in args: it ends by itself. ready, when
  // given, is called with the tool's pid once it is tracing.
  RunResult count_reads(std::vector<std::string> args, long n = kReads,
                        const std::function<void(pid_t)>& ready = {}) {
    Workload w("reads", {std::to_string(n)});
    bool ends_itself = false;
    for (auto& a : args) {
      if (a == "PID") a = w.pid_str();
      if (a == "-d") ends_itself = true;
    }
    args.insert(args.begin(), tool_path("funccount"));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout("...", 60)) << "no header";
    if (ready) ready(t.pid());
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    if (!ends_itself) t.signal(SIGINT);
    return t.finish(60);
  }
};

// bcc's table header ("%-36s %8s"): -p and t: specs are bcc's command lines.
const std::string kBccTableHeader = "FUNC" + std::string(36, ' ') + "COUNT";

// Whether line is bcc's header for pattern, with any number of functions.
bool bcc_header(const std::string& line, const std::string& pattern) {
  const std::string tail = " functions for \"" + pattern + "\"... Hit Ctrl-C to end.";
  return line.rfind("Tracing ", 0) == 0 && line.size() > tail.size() &&
         line.compare(line.size() - tail.size(), tail.size(), tail) == 0;
}

// The count in the last table of out for name, -1 when it has none.
long count_of(const std::string& out, const std::string& name) {
  long n = -1;
  for (const auto& l : lines_of(out))
    if (l.rfind(name + " ", 0) == 0) n = std::stol(l.substr(l.find_last_of(' ') + 1));
  return n;
}

TEST_F(FunccountRuntime, TracepointCountIsExact) {
  auto r = count_reads({"-p", "PID", "t:syscalls:sys_enter_read"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ls = lines_of(r.out);
  ASSERT_GE(ls.size(), 4u) << r.out;
  EXPECT_EQ(ls[0], "Tracing 1 functions for \"t:syscalls:sys_enter_read\"... Hit Ctrl-C to end.");
  EXPECT_EQ(ls[1], "");
  EXPECT_EQ(ls[2], kBccTableHeader);
  EXPECT_EQ(count_of(r.out, "syscalls:sys_enter_read"), kReads) << r.out;
  EXPECT_EQ(ls.back(), "Detaching...");
}

// A glob, a duration, the top one: the reads are the workload's most
// frequent system call (it makes a handful of others). The glob names 17
// tracepoints, more than kMaxCountedTracepoints: counted in the run's
// instance (perf counters where there are no instances).
TEST_F(FunccountRuntime, GlobDurationTop) {
  auto r = count_reads({"-d", "2", "-t", "1", "-p", "PID", "t:syscalls:sys_enter_re*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(bcc_header(lines_of(r.out)[0], "t:syscalls:sys_enter_re*")) << r.out;
  EXPECT_EQ(count_of(r.out, "syscalls:sys_enter_read"), kReads) << r.out;
  size_t rows = 0;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("syscalls:", 0) == 0) ++rows;
  EXPECT_EQ(rows, 1u) << r.out;
}

// -i: a table each second, the counts since the one before: the reads,
// all in one of them, N in all.
TEST_F(FunccountRuntime, IntervalsSumToTheTruth) {
  auto r = count_reads({"-i", "1", "-T", "-p", "PID", "t:syscalls:sys_enter_read"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long sum = 0;
  size_t tables = 0;
  for (const auto& l : lines_of(r.out)) {
    if (l.rfind("syscalls:sys_enter_read ", 0) == 0) sum += std::stol(l.substr(l.find_last_of(' ') + 1));
    if (l == kBccTableHeader) ++tables;
  }
  EXPECT_EQ(sum, kReads) << r.out;
  EXPECT_GE(tables, 1u);
}

// Whether the tracefs has an instance of the run of pid (tracekit_PID).
bool has_instance(pid_t pid) {
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator("/sys/kernel/tracing/instances", ec))
    if (tracefs::owner_pid(d.path().filename().string()) == pid) return true;
  return false;
}

// Every syscall tracepoint (360 here), one process: counted in the run's
// instance, by event id, exactly; nothing lost.
TEST_F(FunccountRuntime, ManyTracepointsExact) {
  auto r = count_reads({"-p", "PID", "t:syscalls:sys_enter_*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(bcc_header(lines_of(r.out)[0], "t:syscalls:sys_enter_*")) << r.out;
  EXPECT_EQ(count_of(r.out, "syscalls:sys_enter_read"), kReads) << r.out;
  EXPECT_FALSE(contains(r.err, "lost")) << r.err;
}

// -i with many tracepoints: the tables sum to the truth.
TEST_F(FunccountRuntime, ManyTracepointsIntervalsSumToTheTruth) {
  auto r = count_reads({"-i", "1", "-p", "PID", "t:syscalls:sys_enter_*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long sum = 0;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("syscalls:sys_enter_read ", 0) == 0) sum += std::stol(l.substr(l.find_last_of(' ') + 1));
  EXPECT_EQ(sum, kReads) << r.out;
  EXPECT_FALSE(contains(r.err, "lost")) << r.err;
}

// Without -p: every process's reads, the workload's among them (the
// tool's own, reading its buffers, left out).
TEST_F(FunccountRuntime, ManyTracepointsWholeSystem) {
  auto r = count_reads({"-d", "2", "t:syscalls:sys_enter_*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GE(count_of(r.out, "syscalls:sys_enter_read"), kReads) << r.out;
  EXPECT_FALSE(contains(r.err, "lost")) << r.err;
}

// The ways for many tracepoints: the run's instance where the kernel has
// instances (with -p, its pid list; without event-fork, a common_pid
// filter and a note; without syscall tracepoints, raw_syscalls:sys_enter
// with an id filter, counted by its id field); perf counters without, as
// for a few tracepoints. Exact every way. 17 tracepoints, not 360: the
// perf counters' teardown takes 35 ms each.
TEST_F(FunccountRuntime, ManyTracepointsWays) {
  struct Way {
    std::string forced;
    bool instance;
    std::string note;
  };
  for (const auto& w : std::vector<Way>{{"", true, ""},
                                        {"-set_event_pid,-event_fork", true, "cannot follow forks"},
                                        {"-syscall_tracepoints", true, ""},
                                        {"-instances", false, ""},
                                        {"-tracefs,-instances", false, ""}}) {
    ForcedFeatures f(w.forced, false);
    bool instance = false;
    auto r = count_reads({"-p", "PID", "t:syscalls:sys_enter_re*"}, kReads,
                         [&](pid_t tool) { instance = has_instance(tool); });
    ASSERT_EQ(r.exit_code, 0) << w.forced << ": " << r.err;
    EXPECT_EQ(instance, w.instance) << w.forced;
    EXPECT_EQ(count_of(r.out, "syscalls:sys_enter_read"), kReads) << w.forced << ": " << r.out;
    if (!w.note.empty()) {
      EXPECT_TRUE(contains(r.err, w.note)) << w.forced << ": " << r.err;
    }
  }
}

// bcc's funccount_example.txt: -r 'c:(write|read)$' counts read and write,
// the regex matched from the name's start as bcc's re.match does, not
// _IO_fread, __libc_pread, _IO_fwrite... (uprobes; the workload's "done"
// line is written with libc's write).
TEST_F(FunccountRuntime, RegexMatchesFromTheStartAsBcc) {
  auto r = count_reads({"-r", "-p", "PID", "c:(write|read)$"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ls = lines_of(r.out);
  ASSERT_GE(ls.size(), 3u) << r.out;
  EXPECT_EQ(ls[0], "Tracing 2 functions for \"c:(write|read)$\"... Hit Ctrl-C to end.");
  EXPECT_GE(count_of(r.out, "write"), 1) << r.out;
  bool table = false;
  for (const auto& l : ls) {
    if (l == kBccTableHeader) {
      table = true;
      continue;
    }
    if (!table || l.empty() || l == "Detaching...") continue;
    const std::string name = l.substr(0, l.find(' '));
    EXPECT_TRUE(name == "read" || name == "write") << l;
  }
  EXPECT_TRUE(table) << r.out;
  EXPECT_EQ(tracefs_snapshot(), before_);
}

// bcc's -c: one CPU only, by perf counters on that CPU (one tracepoint) or
// the instance's tracing_cpumask (many). The reads workload pinned to CPU
// 1: -c 1 counts all its reads, -c 0 none (-p keeps other processes out).
TEST_F(FunccountRuntime, OneCpuOnly) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  for (const char* spec : {"t:syscalls:sys_enter_read", "t:syscalls:sys_enter_re*"}) {
    for (int cpu : {0, 1}) {
      SCOPED_TRACE(std::string(spec) + " -c " + std::to_string(cpu));
      Workload w("reads", {std::to_string(kReads)});
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(1, &set);
      ASSERT_EQ(sched_setaffinity(w.pid(), sizeof set, &set), 0);
      Running t({tool_path("funccount"), "-c", std::to_string(cpu), "-p", w.pid_str(), spec});
      ASSERT_TRUE(t.wait_for_stdout("...", 60)) << "no header";
      kill(w.pid(), SIGUSR1);
      ASSERT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
      t.signal(SIGINT);
      auto r = t.finish(60);
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(count_of(r.out, "syscalls:sys_enter_read"), cpu == 1 ? kReads : -1) << r.out;
    }
  }
}

// Whether process pid is gone (or a zombie: its descriptors are closed).
bool gone(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return true;
  const size_t paren = stat->rfind(')');
  return paren == std::string::npos || stat->compare(paren + 1, 3, " Z ") == 0;
}

// Issue 38: detaching from many uprobes (802: 72 s) said nothing, and a
// second Ctrl-C said "stopped at once" while the process lived on (65 s)
// as the kernel released its perf counters at its exit. Now the detach is
// said on stderr, and the second Ctrl-C ends the run at once: a background
// process releases the counters, the next run removes the probes.
TEST_F(FunccountRuntime, SecondCtrlCEndsTheDetachAtOnce) {
  Running t({tool_path("funccount"), "c:[a-b]*"});
  ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.", 60)) << "no header";
  t.signal(SIGINT);
  ASSERT_TRUE(t.wait_for_stderr(" probes (Ctrl-C again to leave the rest to the next run)...", 30))
      << "the detach is not said";
  const auto start = std::chrono::steady_clock::now();
  t.signal(SIGINT);
  auto r = t.finish(60);
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(secs, 1.0) << r.err;
  EXPECT_EQ(r.exit_code, 128 + SIGINT) << r.err;
  const std::string said = " perf events in process ";
  const size_t at = r.err.find(said);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_TRUE(contains(r.err, "funccount: stopped at once (second signal); the kernel releases its "))
      << r.err;
  const pid_t closer = std::stoi(r.err.substr(at + said.size()));
  for (int i = 0; i < 1800 && !gone(closer); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(gone(closer)) << "the releasing process still runs after 180 s";
  // The next run removes what the stopped one left.
  auto next = run({tool_path("funccount"), "-d", "0.1", "t:sched:sched_switch"}, 120);
  EXPECT_EQ(next.exit_code, 0) << next.err;
  EXPECT_FALSE(contains(next.err, "cannot remove")) << next.err;
}

struct Refusal {
  std::vector<std::string> args;
};

TEST_F(FunccountRuntime, KernelFunctionsRefusedClearlyHere) {
  ForcedFeatures off("-kprobes,-function_tracer,-function_profiler");
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"vfs_read"}, {"-d", "1", "vfs_*"}, {"-p", "1", "-r", "^vfs_read$"}}) {
    std::vector<std::string> argv{tool_path("funccount")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(contains(r.err, "funccount: cannot count kernel functions here: kprobes turned off"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "CONFIG_KPROBE_EVENTS")) << r.err;
  }
}

TEST_F(FunccountRuntime, BadInput) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {},
           {"-t", "0", "x"},
           {"-d", "-1", "x"},
           {"-T", "x"},
           {"-p", "x", "y"},
           {"-q", "x"},
           {""},  // an empty pattern: exit 2, as stackcount and stacksnoop
           {"t:sched"},
           {"-r", "vfs_(read"}}) {
    std::vector<std::string> argv{tool_path("funccount")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(contains(r.err, "USAGE: funccount")) << r.err;
  }
  auto r = run({tool_path("funccount"), "r::vfs_read"}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(contains(r.err, "counts function entries and tracepoints")) << r.err;
  r = run({tool_path("funccount"), "t:tk_no_such:event_*"}, 30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // TOOLS.md's line, on stderr with the tool's name; tracepoints called so.
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "funccount: 0 tracepoints matched by \"t:tk_no_such:event_*\". Exiting.\n");
}

}  // namespace
}  // namespace tracekit::testing
