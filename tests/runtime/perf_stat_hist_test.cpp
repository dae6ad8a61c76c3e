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
// same time: the same text, header and counts, line for line. Both run for
// a duration and end by themselves: ended by Ctrl-C, the script's perf stat
// may see its "sleep 999999" die of the SIGINT first and fail ("ERROR
// running perf: sleep: Interrupt", once in a fresh-clone make check).
TEST_F(PerfStatHistRuntime, SameAsPerfTools) {
  PerfToolsPeer peer("perf-stat-hist");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  if (access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "perf is not installed";
  for (const auto& buckets : std::vector<std::vector<std::string>>{
           {}, {"-P", "2", "-m", "100"}, {"-b", "10 50 100 5000"}}) {
    Workload w("reads", kReads);
    std::vector<std::string> args = buckets;
    for (const std::string a : {"-f", "common_pid == PID", "syscalls:sys_enter_read", "count", "1"})
      args.push_back(a == "common_pid == PID" ? "common_pid == " + w.pid_str() : a);
    std::vector<std::string> argv{tool_path("perf-stat-hist")};
    argv.insert(argv.end(), args.begin(), args.end());
    Running ours(argv);
    ASSERT_TRUE(ours.wait_for_stdout("...\n", 60));
    ASSERT_TRUE(peer.start(args, std::string("sleep\0001\0", 8))) << peer.why_not();
    // Both count now, for a second from their start: the 1000 reads take
    // milliseconds.
    kill(w.pid(), SIGUSR1);
    ASSERT_TRUE(w.wait_line("done", 60));
    auto a = ours.finish(60);
    ASSERT_EQ(a.exit_code, 0) << a.err;
    // It ends by itself too (its rows printed, its output closed).
    EXPECT_TRUE(peer.wait_for_end(30));
    auto b = peer.finish();
    EXPECT_EQ(a.out, b.out) << "theirs: " << b.err;
    EXPECT_GT(counts_of(a.out).size(), 1u) << a.out;
  }
}

}  // namespace
}  // namespace tracekit::testing
