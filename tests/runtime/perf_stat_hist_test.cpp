// perf-stat-hist on this kernel: the reads workload's read(2) requests,
// whose sizes are known exactly (reads 1000 100: sizes 1 to 100, ten
// reads of each), counted per bucket in one process (-p), or on every CPU
// with a filter on its pid (-f) or its name (-n); and perf-tools'
// perf-stat-hist (perf stat) on the same requests at the same time.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

const std::vector<std::string> kReads{"1000", "100"};

// The counts of the histogram rows in out, in order.
std::vector<uint64_t> counts_of(const std::string& out) {
  std::vector<uint64_t> counts;
  for (const auto& l : lines_of(out)) {
    auto arrow = l.find(" -> "), colon = l.find(": ");
    if (arrow == std::string::npos || colon == std::string::npos || colon < arrow) continue;
    counts.push_back(std::stoull(l.substr(colon + 2)));
  }
  return counts;
}

class PerfStatHistRuntime : public TracingTest {
 protected:
  // Runs perf-stat-hist with args ("PID": the workload's) while the reads
  // workload makes its reads; ended by end (a signal, within a second)
  // unless the args give seconds (end 0).
  RunResult trace_reads(std::vector<std::string> args, int end = SIGINT) {
    Workload w("reads", kReads);
    for (auto& a : args)
      if (auto at = a.find("PID"); at != std::string::npos) a.replace(at, 3, w.pid_str());
    args.insert(args.begin(), tool_path("perf-stat-hist"));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout("...\n", 60)) << "no header";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    pid_ = w.pid_str();
    if (!end) return t.finish(60);
    const auto t0 = std::chrono::steady_clock::now();
    t.signal(end);
    auto r = t.finish(60);
    // Within a second, with a margin for this busy machine.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    return r;
  }
  std::string pid_;  // the last workload's
};

TEST_F(PerfStatHistRuntime, ExactCountsOfAProcess) {
  auto r = trace_reads({"-P", "2", "-m", "128", "-p", "PID", "syscalls:sys_enter_read", "count"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto ls = lines_of(r.out);
  ASSERT_EQ(ls.size(), 13u) << r.out;
  EXPECT_EQ(ls[0], "Tracing syscalls:sys_enter_read issued by PID " + pid_ +
                       ", power-of-2, max 128, until Ctrl-C...");
  EXPECT_EQ(ls[1], "");
  EXPECT_EQ(ls[2], "            Range          : Count    Distribution");
  EXPECT_EQ(ls[3],
            "              -> -1        : 0        |                                      |");
  EXPECT_EQ(ls[11],
            "           64 -> 127       : 370      |######################################|");
  EXPECT_EQ(ls[12],
            "          128 ->           : 0        |                                      |");
  // Sizes 1..100, ten of each: 1, 2-3, 4-7, ..., 64-100.
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{0, 0, 10, 20, 40, 80, 160, 320, 370, 0}))
      << r.out;
}

// perf-tools' defaults (power-of-4, max 1048576) and its -f, on every CPU,
// with the seconds argument (the run ends by itself); -b's list, ended by
// SIGTERM.
TEST_F(PerfStatHistRuntime, DefaultsFilterAndSeconds) {
  auto r = trace_reads({"-f", "common_pid == PID", "syscalls:sys_enter_read", "count", "2"}, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing syscalls:sys_enter_read (Filter: common_pid == " + pid_ +
                                    "), power-of-4, max 1048576, for 2 seconds...");
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{0, 0, 30, 120, 480, 370, 0, 0, 0, 0, 0, 0, 0}))
      << r.out;
  r = trace_reads({"-b", "10 50", "-f", "common_pid == PID", "syscalls:sys_enter_read", "count"},
                  SIGTERM);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing syscalls:sys_enter_read (Filter: common_pid == " + pid_ +
                                    "), specified buckets, until Ctrl-C...");
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{90, 400, 510})) << r.out;
}

// -n: the kernel's comm filter (a glob), with -f on the pid (other runs of
// the reads workload may be about); a name that does not match counts
// nothing.
TEST_F(PerfStatHistRuntime, ProcessName) {
  auto r = trace_reads(
      {"-n", "rea*", "-b", "64", "-f", "common_pid == PID", "syscalls:sys_enter_read", "count"},
      SIGHUP);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing syscalls:sys_enter_read (Filter: common_pid == " + pid_ +
                                    ") issued by process name \"rea*\", specified buckets, "
                                    "until Ctrl-C...");
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{630, 370})) << r.out;
  r = trace_reads({"-n", "tk_nobody", "-b", "64", "-f", "common_pid == PID",
                   "syscalls:sys_enter_read", "count"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{0, 0})) << r.out;
}

// perf-tools' perf-stat-hist (perf stat) with the same arguments at the
// same time: the same text, header and counts, line for line.
TEST_F(PerfStatHistRuntime, SameAsPerfTools) {
  PerfToolsPeer peer("perf-stat-hist");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  if (access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "perf is not installed";
  for (const auto& buckets : std::vector<std::vector<std::string>>{
           {}, {"-P", "2", "-m", "100"}, {"-b", "10 50 100 5000"}}) {
    Workload w("reads", kReads);
    std::vector<std::string> args = buckets;
    for (const std::string a : {"-f", "common_pid == PID", "syscalls:sys_enter_read", "count"})
      args.push_back(a == "common_pid == PID" ? "common_pid == " + w.pid_str() : a);
    std::vector<std::string> argv{tool_path("perf-stat-hist")};
    argv.insert(argv.end(), args.begin(), args.end());
    Running ours(argv);
    ASSERT_TRUE(ours.wait_for_stdout("...\n", 60));
    ASSERT_TRUE(peer.start(args, std::string("sleep\000999999\0", 13))) << peer.why_not();
    kill(w.pid(), SIGUSR1);
    ASSERT_TRUE(w.wait_line("done", 60));
    ours.signal(SIGINT);
    auto a = ours.finish(60);
    auto b = peer.finish();
    ASSERT_EQ(a.exit_code, 0) << a.err;
    EXPECT_EQ(a.out, b.out) << "theirs: " << b.err;
    EXPECT_GT(counts_of(a.out).size(), 1u) << a.out;
  }
}

TEST_F(PerfStatHistRuntime, BadInput) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"-b", "10 5", "syscalls:sys_enter_read", "count"},
           {"-b", "x", "syscalls:sys_enter_read", "count"},
           {"-b", "10", "-P", "2", "syscalls:sys_enter_read", "count"},
           {"-b", "10", "-m", "2", "syscalls:sys_enter_read", "count"},
           {"-P", "1", "syscalls:sys_enter_read", "count"},
           {"-m", "-1", "syscalls:sys_enter_read", "count"},
           {"-p", "1", "-n", "x", "syscalls:sys_enter_read", "count"},
           {"-p", "0", "syscalls:sys_enter_read", "count"},
           {"-n", "a\"b", "syscalls:sys_enter_read", "count"},
           {"sys_enter_read", "count"},
           {"syscalls:sys_enter_read"},
           {"syscalls:sys_enter_read", "count", "0"},
           {"syscalls:sys_enter_read", "count", "1", "2"},
           {"-q", "syscalls:sys_enter_read", "count"}}) {
    std::vector<std::string> argv{tool_path("perf-stat-hist")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << r.err;
    EXPECT_TRUE(contains(r.err, "USAGE: perf-stat-hist")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  // What only the kernel's tracefs can say: one line naming what is missing.
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"syscalls:sys_enter_tk_none", "count", "1"},
            "perf-stat-hist: no tracepoint syscalls:sys_enter_tk_none"},
           {{"syscalls:sys_enter_read", "tk_none", "1"},
            "perf-stat-hist: syscalls:sys_enter_read has no field 'tk_none'"},
           {{"syscalls:sys_enter_openat", "filename", "1"},
            "perf-stat-hist: field 'filename' of syscalls:sys_enter_openat is not a number"},
           {{"-b", "-1", "syscalls:sys_enter_read", "count", "1"},
            "perf-stat-hist: field 'count' of syscalls:sys_enter_read is unsigned"},
           {{"-f", "tk_none == 1", "syscalls:sys_enter_read", "count", "1"},
            "perf-stat-hist: cannot set filter '(count < 0) && (tk_none == 1)'"},
           {{"-p", "999999999", "syscalls:sys_enter_read", "count", "1"},
            "perf-stat-hist: no process with PID 999999999"}}) {
    std::vector<std::string> argv{tool_path("perf-stat-hist")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_EQ(r.err.rfind(says, 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace tracekit::testing
