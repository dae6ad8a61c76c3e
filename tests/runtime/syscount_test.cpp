// syscount against the syscount_n workload (tests/workloads/syscount_n.c):
// after its go it makes kGetppid getppid, one clone, wait4, write and
// exit_group; its child makes kGetuid getuid and exit_group, every one a
// raw syscall. The truth: exactly those counts, by syscall name and by
// process. The workload is blocked in read(2) (its go) before syscount
// starts, so that read's entry is not counted. In command mode the
// dynamic loader's syscalls come too: the markers are exact, and the whole
// per-process counts equal perf-tools' syscount (perf) on the same command.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr long kGetppid = 1009;  // primes
constexpr long kGetuid = 401;

// A table row: the columns before COUNT joined by one space, and COUNT.
using Table = std::map<std::string, unsigned long>;

// The rows after the header line that starts with first ("PID", "COMM",
// "SYSCALL"); rows with the same key are summed (none should be).
Table table_of(const std::string& out, const std::string& first, size_t* rows = nullptr) {
  Table t;
  bool started = false;
  size_t n = 0;
  for (const auto& l : lines_of(out)) {
    if (!started) {
      started = l.rfind(first + " ", 0) == 0 && l.find("COUNT") != std::string::npos;
      continue;
    }
    std::istringstream in(l);
    std::vector<std::string> w;
    for (std::string s; in >> s;) w.push_back(s);
    if (w.size() < 2 || w.back().find_first_not_of("0123456789") != std::string::npos) continue;
    std::string key;
    for (size_t i = 0; i + 1 < w.size(); ++i) key += (i ? " " : "") + w[i];
    t[key] += std::stoul(w.back());
    ++n;
  }
  if (rows) *rows = n;
  return t;
}

// Waits until pid is blocked in read(2) (syscall 0 in /proc/PID/syscall).
bool blocked_in_read(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    if (slurp("/proc/" + std::to_string(pid) + "/syscall").rfind("0 ", 0) == 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Waits until pid has exited (a zombie, not reaped): its last syscall,
// exit_group, has been made.
bool exited(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    auto paren = stat.rfind(')');
    if (paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] == 'Z')
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Whether pid is a process (not a zombie: a reaped child's PID is gone).
bool process_alive(pid_t pid) {
  std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto paren = stat.rfind(')');
  return paren != std::string::npos && stat.size() > paren + 2 && stat[paren + 2] != 'Z';
}

long child_of(const Workload& w) {
  for (const auto& l : w.lines())
    if (l.rfind("child ", 0) == 0) return std::stol(l.substr(6));
  return -1;
}

class SyscountRuntime : public TracingTest {
 protected:
  struct Traced {
    RunResult r;
    long pid = 0, child = -1;
  };
  // Runs syscount with args ("PID": the workload's) while the workload
  // makes its syscalls; ended by signal sig once the workload is done
  // (0: it ends by itself, -d).
  Traced trace(std::vector<std::string> args, int sig = SIGINT, const std::string& header = "...") {
    Traced t;
    Workload w("syscount_n", {std::to_string(kGetppid), std::to_string(kGetuid)});
    t.pid = w.pid();
    EXPECT_TRUE(blocked_in_read(w.pid()));
    for (auto& a : args)
      if (a == "PID") a = w.pid_str();
    args.insert(args.begin(), tool_path("syscount"));
    Running tool(args);
    EXPECT_TRUE(tool.wait_for_stdout(header, 60)) << "no header";
    w.go();
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    t.child = child_of(w);
    EXPECT_TRUE(exited(w.pid()));
    if (sig) tool.signal(sig);
    t.r = tool.finish(60);
    return t;
  }
};

// -cv -p: the process's syscalls by name, exactly; not its child's.
TEST_F(SyscountRuntime, ByNameAndProcessExact) {
  auto t = trace({"-cv", "-p", "PID"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  const std::string p = std::to_string(t.pid) + " syscount_n ";
  size_t rows = 0;
  Table got = table_of(t.r.out, "PID", &rows);
  Table want{{p + "getppid", kGetppid},
             {p + "clone", 1},
             {p + "wait4", 1},
             {p + "write", 1},
             {p + "exit_group", 1}};
  EXPECT_EQ(got, want) << t.r.out;
  EXPECT_EQ(rows, want.size());
  auto lines = lines_of(t.r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Tracing PID " + std::to_string(t.pid) + "... Ctrl-C to end.");
  EXPECT_EQ(lines[1], "PID    COMM             SYSCALL              COUNT");
}

// -c -p: by name; the rows by ascending count, each "%-17s %8d".
TEST_F(SyscountRuntime, ByNameExact) {
  auto t = trace({"-c", "-p", "PID"});
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  Table want{{"getppid", kGetppid}, {"clone", 1}, {"wait4", 1}, {"write", 1}, {"exit_group", 1}};
  EXPECT_EQ(table_of(t.r.out, "SYSCALL"), want) << t.r.out;
  auto lines = lines_of(t.r.out);
  ASSERT_EQ(lines.size(), 7u) << t.r.out;
  EXPECT_EQ(lines[1], "SYSCALL              COUNT");
  EXPECT_EQ(lines[2], "clone                    1");
  EXPECT_EQ(lines[6], "getppid               1009");
}

// -v -p, ended by SIGTERM: one row, the process's total.
TEST_F(SyscountRuntime, ByProcessWithPid) {
  auto t = trace({"-v", "-p", "PID"}, SIGTERM);
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  EXPECT_EQ(table_of(t.r.out, "PID"),
            (Table{{std::to_string(t.pid) + " syscount_n", kGetppid + 4}}))
      << t.r.out;
  EXPECT_EQ(lines_of(t.r.out)[1], "PID    COMM                COUNT");
}

// The default (by process name), ended by SIGHUP, and -t 1.
TEST_F(SyscountRuntime, ByNameOfProcessAndTop) {
  auto t = trace({"-p", "PID"}, SIGHUP);
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  EXPECT_EQ(table_of(t.r.out, "COMM"), (Table{{"syscount_n", kGetppid + 4}})) << t.r.out;
  EXPECT_EQ(lines_of(t.r.out)[1], "COMM                COUNT");

  auto top = trace({"-c", "-t", "1", "-p", "PID"});
  ASSERT_EQ(top.r.exit_code, 0) << top.r.err;
  auto lines = lines_of(top.r.out);
  ASSERT_EQ(lines.size(), 3u) << top.r.out;
  EXPECT_EQ(lines[0], "Tracing PID " + std::to_string(top.pid) + ". Top 1 only... Ctrl-C to end.");
  EXPECT_EQ(lines[2], "getppid               1009");
}

// -d, system-wide: the workload's and its child's rows, exactly, among
// everyone else's.
TEST_F(SyscountRuntime, DurationSystemWide) {
  auto t = trace({"-cv", "-d", "4"}, 0, "Tracing for 4 seconds...\n");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  ASSERT_GT(t.child, 0);
  const std::string p = std::to_string(t.pid) + " syscount_n ";
  const std::string c = std::to_string(t.child) + " syscount_n ";
  Table ours;
  for (const auto& [k, n] : table_of(t.r.out, "PID"))
    if (k.rfind(p, 0) == 0 || k.rfind(c, 0) == 0) ours[k] = n;
  Table want{{p + "getppid", kGetppid}, {p + "clone", 1},      {p + "wait4", 1},
             {p + "write", 1},          {p + "exit_group", 1}, {c + "getuid", kGetuid},
             {c + "exit_group", 1}};
  EXPECT_EQ(ours, want) << t.r.out;
  // Not our own syscalls.
  EXPECT_FALSE(contains(t.r.out, " syscount "));
}

// Two runs at once on the same process: both exact. Where there are no
// instances (forced off), both would trace at the top level: the second is
// refused, naming the first, which is not disturbed.
TEST_F(SyscountRuntime, TwoRunsAtOnce) {
  const bool instances = !kernel::forced_off(kernel::Feature::kInstances);
  Workload w("syscount_n", {std::to_string(kGetppid), std::to_string(kGetuid)});
  ASSERT_TRUE(blocked_in_read(w.pid()));
  Running a({tool_path("syscount"), "-c", "-p", w.pid_str()});
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  std::optional<Running> b;
  if (instances) {
    b.emplace(std::vector<std::string>{tool_path("syscount"), "-v", "-p", w.pid_str()});
    ASSERT_TRUE(b->wait_for_stdout("Ctrl-C to end.\n", 60));
  } else {
    auto refused = run({tool_path("syscount"), "-v", "-p", w.pid_str()});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("ftrace is in use by PID " + std::to_string(a.pid())),
              std::string::npos)
        << refused.err;
  }
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60));
  ASSERT_TRUE(exited(w.pid()));
  a.signal(SIGINT);
  auto ra = a.finish(60);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  EXPECT_EQ(table_of(ra.out, "SYSCALL")["getppid"], static_cast<unsigned long>(kGetppid));
  if (!b) return;
  b->signal(SIGINT);
  auto rb = b->finish(60);
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(table_of(rb.out, "PID"), (Table{{w.pid_str() + " syscount_n", kGetppid + 4}}))
      << rb.out;
}

// Command mode: the command and its child, to the end of the command;
// the execve that starts it is not counted (as perf's enable_on_exec).
TEST_F(SyscountRuntime, CommandAndItsChildren) {
  auto r = run({tool_path("syscount"), "-cv", workload_path("syscount_n"), std::to_string(kGetppid),
                std::to_string(kGetuid), "now"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  long child = -1;
  for (const auto& l : lines_of(r.out))
    if (l.rfind("child ", 0) == 0) child = std::stol(l.substr(6));
  ASSERT_GT(child, 0) << r.out;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing while running: \"" + workload_path("syscount_n") + " " +
                                    std::to_string(kGetppid) + " " + std::to_string(kGetuid) +
                                    " now\"...");
  Table got = table_of(r.out, "PID");
  std::string parent;
  for (const auto& [k, n] : got)
    if (k.find(" getppid") != std::string::npos) parent = k.substr(0, k.find(' '));
  ASSERT_FALSE(parent.empty()) << r.out;
  const std::string p = parent + " syscount_n ";
  const std::string c = std::to_string(child) + " syscount_n ";
  EXPECT_EQ(got[p + "getppid"], static_cast<unsigned long>(kGetppid));
  EXPECT_EQ(got[p + "clone"], 1u);
  EXPECT_EQ(got[p + "wait4"], 1u);
  EXPECT_EQ(got[p + "exit_group"], 1u);
  EXPECT_EQ(got.count(p + "execve"), 0u) << r.out;
  Table of_child;
  for (const auto& [k, n] : got)
    if (k.rfind(c, 0) == 0) of_child[k] = n;
  // Where the kernel cannot follow forks (no event-fork, or forced off),
  // syscount follows them itself through sched_process_fork: the child's
  // calls are counted either way.
  EXPECT_EQ(of_child, (Table{{c + "getuid", kGetuid}, {c + "exit_group", 1}})) << r.out;
}

// A command still running when syscount is stopped: the table so far, exit
// 0 at once, and the command ended too (SIGTERM, then reaped).
TEST_F(SyscountRuntime, StoppedBeforeTheCommandEnds) {
  Running tool({tool_path("syscount"), "-c", "/bin/sleep", "60"});
  ASSERT_TRUE(tool.wait_for_stdout("Tracing while running: \"/bin/sleep 60\"...\n", 60));
  // The sleep has begun when its clock_nanosleep is the syscall it is in.
  pid_t sleeper = -1;
  for (int i = 0; i < 1000 && sleeper < 0; ++i) {
    std::istringstream kids(slurp("/proc/" + std::to_string(tool.pid()) + "/task/" +
                                  std::to_string(tool.pid()) + "/children"));
    int kid = 0;
    if (kids >> kid && slurp("/proc/" + std::to_string(kid) + "/syscall").rfind("230 ", 0) == 0)
      sleeper = kid;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GT(sleeper, 0);
  tool.signal(SIGTERM);
  auto r = tool.finish(10);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(table_of(r.out, "SYSCALL")["clock_nanosleep"], 1u) << r.out;
  EXPECT_FALSE(process_alive(sleeper));
}

// The same command under perf-tools' syscount (perf record, inherited by
// the child): the same count per process. perf-tools writes perf.data in
// the current directory, and perf record writes its data to stdout when
// that is a pipe: run it in a directory of its own, output to a file.
TEST_F(SyscountRuntime, SameCountsAsPerfTools) {
  const std::string script = "/usr/sbin/syscount-perf";
  if (access(script.c_str(), X_OK) != 0 || access("/usr/bin/perf", X_OK) != 0)
    GTEST_SKIP() << "no perf-tools syscount or perf here";
  // Absolute: the peer runs in a directory of its own.
  const std::vector<std::string> cmd{std::filesystem::absolute(workload_path("syscount_n")),
                                     std::to_string(kGetppid), std::to_string(kGetuid), "now"};
  char dir[] = "/tmp/tracekit-syscount-peer.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string line = "cd " + std::string(dir) + " && " + script + " -v";
  for (const auto& a : cmd) line += " " + a;
  line += " > out.txt 2>&1";
  auto peer = run({"/bin/sh", "-c", line});
  const std::string theirs = slurp(std::string(dir) + "/out.txt");
  (void)run({"/bin/rm", "-rf", dir});
  ASSERT_EQ(peer.exit_code, 0) << theirs;
  std::vector<std::string> argv{tool_path("syscount"), "-v"};
  argv.insert(argv.end(), cmd.begin(), cmd.end());
  auto ours = run(argv);
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  // PIDs differ between the runs: compare the counts of each table, in order
  // (ascending: the child, then the parent).
  auto counts = [](const std::string& out) {
    std::vector<unsigned long> c;
    for (const auto& [k, n] : table_of(out, "PID")) c.push_back(n);
    std::sort(c.begin(), c.end());
    return c;
  };
  EXPECT_EQ(counts(ours.out), counts(theirs)) << ours.out << "\n---\n" << theirs;
  EXPECT_EQ(counts(ours.out).size(), 2u) << ours.out;
  EXPECT_EQ(counts(ours.out).front(), static_cast<unsigned long>(kGetuid + 1)) << ours.out;
}

// Usage errors: exit 2, one line and the synopsis, nothing set up.
TEST_F(SyscountRuntime, UsageErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-p", "1", "-d", "1"},
                                               {"-p", "1", "true"},
                                               {"-d", "1", "true"},
                                               {"-p", "0"},
                                               {"-d", "0"},
                                               {"-t", "0"},
                                               {"-t", "x"},
                                               {"-q"}}) {
    std::vector<std::string> argv{tool_path("syscount")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("syscount: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("USAGE: syscount [-chv]"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

// Runtime failures: exit 1, the cause named.
TEST_F(SyscountRuntime, NoSuchProcessOrCommand) {
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  waitpid(gone, nullptr, 0);
  auto r = run({tool_path("syscount"), "-p", std::to_string(gone)});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no process with PID " + std::to_string(gone)), std::string::npos) << r.err;
  r = run({tool_path("syscount"), "-c", "tracekit-no-such-program"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot run \"tracekit-no-such-program\""), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// The command's own options are its own: "-c" after the command is ls's.
TEST_F(SyscountRuntime, CommandOptionsAreTheCommands) {
  auto r = run({tool_path("syscount"), "-c", "/bin/sh", "-c", "exit 3"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Tracing while running: \"/bin/sh -c exit 3\"..."), std::string::npos)
      << r.out;
  EXPECT_GT(table_of(r.out, "SYSCALL")["exit_group"], 0u) << r.out;
}

// stdout closed early (| head -1): the run ends at its duration, quietly,
// exit 0, and tracefs is left clean (TearDown checks).
TEST_F(SyscountRuntime, ClosedStdout) {
  auto r = run(
      {"/bin/sh", "-c", "(" + tool_path("syscount") + " -c -d 1; echo \"exit $?\" >&2) | head -1"});
  EXPECT_EQ(r.err, "exit 0\n");
  EXPECT_EQ(r.out, "Tracing for 1 seconds...\n");
}

// A process renamed with prctl(PR_SET_NAME) to a name holding ESC and a
// newline (tests/workloads/hostile.c): its rows show the name with '?' for
// each control character, one line each.
TEST_F(SyscountRuntime, ControlCharactersInCommsCannotForgeLines) {
  auto h = run_against_hostile({tool_path("syscount"), "-cv", "-p", "PID"}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  long getppid = 0;
  bool table = false;
  for (const auto& l : lines_of(h.r.out)) {
    if (l.rfind("PID ", 0) == 0) {
      table = true;
      continue;
    }
    if (!table || l.empty()) continue;
    // Every row starts with the workload's PID: none is forged.
    EXPECT_EQ(l.rfind(std::to_string(h.pid) + " ", 0), 0u) << l;
    if (l.find(" getppid ") != std::string::npos) {
      EXPECT_NE(l.find(" ev?[2J?il "), std::string::npos) << l;
      std::istringstream in(l.substr(l.rfind(' ')));
      in >> getppid;
    }
  }
  EXPECT_EQ(getppid, 7) << h.r.out;
}

}  // namespace
}  // namespace tracekit::testing
