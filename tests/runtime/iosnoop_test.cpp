// iosnoop and iolatency against the blockio workload (tests/workloads/
// blockio.c) on a loop device made for each test (losetup on a file in
// /tmp, removed again even when the test fails): after its "go" it makes
// kWrites O_DIRECT writes of kWriteSize bytes at sectors 0, 16, 32, ...,
// then kReads reads of kReadSize bytes from 1 MiB (sector 2048) on, each
// one request. The truth: exactly those rows, with the workload's COMM and
// PID, TYPE W.. or R.., the loop device's DEV, the sector in BLOCK, the
// size in BYTES, and a latency above 0 and under a second; iolatency's
// histograms count exactly kWrites + kReads.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr long kWrites = 23, kReads = 31;  // primes
constexpr long kWriteSize = 8192, kReadSize = 4096;

// A loop device on a file of our own, detached and removed at the end.
class LoopDevice {
 public:
  LoopDevice() {
    file_ = "/tmp/tracekit-iosnoop-" + std::to_string(getpid()) + ".img";
    std::ofstream(file_).close();
    if (truncate(file_.c_str(), 8 << 20) != 0) return;
    FILE* p = popen(("losetup -f --show " + file_ + " 2>/dev/null").c_str(), "r");
    if (!p) return;
    char buf[64] = {};
    if (fgets(buf, sizeof buf, p)) path_ = buf;
    pclose(p);
    while (!path_.empty() && path_.back() == '\n') path_.pop_back();
    struct stat st {};
    if (!path_.empty() && stat(path_.c_str(), &st) == 0)
      dev_ = std::to_string(major(st.st_rdev)) + "," + std::to_string(minor(st.st_rdev));
  }
  ~LoopDevice() {
    if (!path_.empty()) (void)run({"/usr/sbin/losetup", "-d", path_}, 30);
    unlink(file_.c_str());
  }
  bool ok() const { return !dev_.empty(); }
  const std::string& path() const { return path_; }                        // /dev/loopN
  std::string name() const { return path_.substr(path_.rfind('/') + 1); }  // loopN
  const std::string& dev() const { return dev_; }                          // "7,N"
  bool set_scheduler(const std::string& s) const {
    std::ofstream f("/sys/block/" + name() + "/queue/scheduler");
    f << s;
    f.close();
    return static_cast<bool>(f);
  }

 private:
  std::string file_, path_, dev_;
};

struct Row {
  double start = 0, end = 0;  // -s -t
  std::string comm, type, dev;
  long pid = 0, block = 0, bytes = 0;
  double lat_ms = 0;
};

// The rows after the COMM header line; with -s -t, two time columns first.
std::vector<Row> rows_of(const std::string& out, bool times) {
  std::vector<Row> rows;
  bool started = false;
  for (const auto& l : lines_of(out)) {
    if (!started) {
      started = l.find("COMM") != std::string::npos && l.find("LATms") != std::string::npos;
      continue;
    }
    if (l.empty() || l == "Ending tracing...") continue;
    std::istringstream in(l);
    Row r;
    if (times) in >> r.start >> r.end;
    in >> r.comm >> r.pid >> r.type >> r.dev >> r.block >> r.bytes >> r.lat_ms;
    rows.push_back(r);
  }
  return rows;
}

class IosnoopRuntime : public TracingTest {
 protected:
  void SetUp() override {
    TracingTest::SetUp();
    if (IsSkipped()) return;
    ASSERT_TRUE(loop_.ok()) << "losetup failed";
  }

  // Runs tool (iosnoop or iolatency) with args ("DEV" -> the loop device's
  // name, "PID" -> the workload's) while the workload does its I/O; ends it
  // with SIGINT unless header says it runs for a duration.
  RunResult trace(const std::string& tool, std::vector<std::string> args, long* pid,
                  const std::string& header = "Ctrl-C to end.\n", bool interrupt = true) {
    Workload w("blockio", {loop_.path(), std::to_string(kWrites), std::to_string(kReads),
                           std::to_string(kWriteSize), std::to_string(kReadSize)});
    if (pid) *pid = w.pid();
    for (auto& a : args) {
      if (a == "DEV") a = loop_.name();
      if (a == "PID") a = w.pid_str();
    }
    args.insert(args.begin(), tool_path(tool));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout(header, 60)) << "no header";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    if (interrupt) t.signal(SIGINT);
    return t.finish(60);
  }

  // Exactly the workload's I/O, in order: writes then reads.
  void expect_workload_rows(const std::vector<Row>& rows, long pid, bool writes, bool reads,
                            bool times) {
    long w = 0, r = 0;
    for (const auto& row : rows) {
      if (row.pid != pid) continue;
      EXPECT_EQ(row.comm, "blockio");
      EXPECT_EQ(row.dev, loop_.dev());
      if (times) {
        EXPECT_GT(row.end, row.start);
        EXPECT_LT(row.end - row.start, 1.0);
      }
      EXPECT_GE(row.lat_ms, 0);
      EXPECT_LT(row.lat_ms, 1000);
      if (!row.type.empty() && row.type[0] == 'W') {
        EXPECT_EQ(row.bytes, kWriteSize);
        EXPECT_EQ(row.block, w * kWriteSize / 512);
        EXPECT_EQ(r, 0) << "a write after the reads";
        ++w;
      } else {
        EXPECT_EQ(row.type[0], 'R') << row.type;
        EXPECT_EQ(row.bytes, kReadSize);
        EXPECT_EQ(row.block, 2048 + r * kReadSize / 512);
        ++r;
      }
    }
    EXPECT_EQ(w, writes ? kWrites : 0);
    EXPECT_EQ(r, reads ? kReads : 0);
  }

  LoopDevice loop_;
};

TEST_F(IosnoopRuntime, EveryIoOfTheDeviceWithSizeTypeAndLatency) {
  long pid = 0;
  auto r = trace("iosnoop", {"-s", "-t", "-d", "DEV"}, &pid);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 2u);
  EXPECT_EQ(lines[0], "Tracing block I/O. Ctrl-C to end.");
  EXPECT_EQ(lines[1],
            "STARTs          ENDs            COMM         PID    TYPE DEV      BLOCK        BYTES "
            "    LATms");
  auto rows = rows_of(r.out, true);
  expect_workload_rows(rows, pid, true, true, true);
  for (const auto& row : rows) EXPECT_EQ(row.dev, loop_.dev());
}

TEST_F(IosnoopRuntime, PidFilter) {
  long pid = 0;
  auto r = trace("iosnoop", {"-p", "PID"}, &pid);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0],
            "Tracing block I/O issued by PID " + std::to_string(pid) + ". Ctrl-C to end.");
  auto rows = rows_of(r.out, false);
  expect_workload_rows(rows, pid, true, true, false);
  for (const auto& row : rows) EXPECT_EQ(row.pid, pid);
}

TEST_F(IosnoopRuntime, NameAndTypeFilters) {
  long pid = 0;
  auto r = trace("iosnoop", {"-n", "^blockio$", "-i", "*R*"}, &pid);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rows = rows_of(r.out, false);
  expect_workload_rows(rows, pid, false, true, false);
  for (const auto& row : rows) {
    EXPECT_EQ(row.comm, "blockio");
    EXPECT_NE(row.type.find('R'), std::string::npos);
  }
}

// -Q with a scheduler on the device, so that requests are inserted, then
// without one: issued directly, never inserted (perf-tools -Q sees none).
TEST_F(IosnoopRuntime, QueueTimeWithAndWithoutInserts) {
  for (const char* sched : {"mq-deadline", "none"}) {
    SCOPED_TRACE(sched);
    ASSERT_TRUE(loop_.set_scheduler(sched));
    long pid = 0;
    auto r = trace("iosnoop", {"-Q", "-d", "DEV", "-p", "PID"}, &pid);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    expect_workload_rows(rows_of(r.out, false), pid, true, true, false);
  }
}

TEST_F(IosnoopRuntime, BufferedForADuration) {
  long pid = 0;
  auto r = trace("iosnoop", {"-d", "DEV", "4"}, &pid, "(buffered)...\n", false);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing block I/O for 4 seconds (buffered)...");
  expect_workload_rows(rows_of(r.out, false), pid, true, true, false);
}

// Two runs at once, each with its own instance: both see everything; ended
// by SIGTERM and by SIGHUP.
TEST_F(IosnoopRuntime, TwoRunsAtOnce) {
  Workload w("blockio", {loop_.path(), std::to_string(kWrites), std::to_string(kReads),
                         std::to_string(kWriteSize), std::to_string(kReadSize)});
  Running a({tool_path("iosnoop"), "-d", loop_.name()});
  Running b({tool_path("iosnoop"), "-p", w.pid_str()});
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(b.wait_for_stdout("Ctrl-C to end.\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  // SIGTERM and SIGHUP end a run as Ctrl-C does.
  a.signal(SIGTERM);
  b.signal(SIGHUP);
  auto ra = a.finish(60), rb = b.finish(60);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  expect_workload_rows(rows_of(ra.out, false), w.pid(), true, true, false);
  expect_workload_rows(rows_of(rb.out, false), w.pid(), true, true, false);
}

// A closed stdout (| head) ends the run, tracefs clean (TracingTest): the
// workload writes without end, head exits after 3 lines (its own output is
// buffered until then, so there is no header to wait for).
TEST_F(IosnoopRuntime, ClosedStdoutEndsTheRun) {
  Workload w("blockio", {loop_.path(), "-1", "0", "4096", "4096"});
  kill(w.pid(), SIGUSR1);
  auto r = run({"/bin/sh", "-c", tool_path("iosnoop") + " -d " + loop_.name() + " | head -3"}, 30);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines[0], "Tracing block I/O. Ctrl-C to end.");
  EXPECT_NE(lines[2].find("blockio"), std::string::npos) << lines[2];
}

TEST_F(IosnoopRuntime, UsageAndRuntimeErrors) {
  for (const std::vector<std::string>& args : {std::vector<std::string>{"-p", "1", "-n", "x"},
                                               {"-p", "0"},
                                               {"-i", "a\"b"},
                                               {"-n", "a(b"},
                                               {"0"},
                                               {"x"},
                                               {"1", "2"},
                                               {"-x"}}) {
    std::vector<std::string> argv{tool_path("iosnoop")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("iosnoop: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("USAGE: iosnoop [-hQst]"), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "");
  }
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"0"}, {"1", "0"}, {"1", "1.5"}, {"1", "2", "3"}, {"-i", "\""}}) {
    std::vector<std::string> argv{tool_path("iolatency")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("USAGE: iolatency [-hQT]"), std::string::npos) << r.err;
  }
  for (const char* tool : {"iosnoop", "iolatency"}) {
    auto r = run({tool_path(tool), "-d", "nosuchdisk"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("no block device named \"nosuchdisk\""), std::string::npos) << r.err;
    auto h = run({tool_path(tool), "-h"});
    EXPECT_EQ(h.exit_code, 0);
    EXPECT_NE(h.out.find(std::string("USAGE: ") + tool), std::string::npos);
    // Issue 38: a device number no device has traced nothing, exit 0.
    auto n = run({tool_path(tool), "-d", "999,999", "1"});
    EXPECT_EQ(n.exit_code, 1) << n.err;
    EXPECT_EQ(n.err, std::string(tool) +
                         ": no block device 999,999: /sys/dev/block/999:999: No such device (see "
                         "lsblk for the devices' MAJ:MIN)\n");
    EXPECT_EQ(n.out, "");
  }
  // ... and so did a PID no process has, as the man page says it must not.
  long pid_max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  const std::string gone = std::to_string(pid_max + 1);  // no process can have it
  auto p = run({tool_path("iosnoop"), "-p", gone, "1"});
  EXPECT_EQ(p.exit_code, 1) << p.err;
  EXPECT_EQ(p.err,
            "iosnoop: no process with PID " + gone + ": No such process (check the PID with ps)\n");
  EXPECT_EQ(p.out, "");
}

// After a perf-tools block script that was killed (it did not end in time,
// once in a while on this busy machine): what its end() would have undone,
// so that other runs are not disturbed.
void undo_block_peer() {
  for (const char* e : {"block_rq_issue", "block_rq_complete"}) {
    const std::string dir = std::string("/sys/kernel/tracing/events/block/") + e;
    std::ofstream(dir + "/enable") << "0";
    std::ofstream(dir + "/filter") << "0";
  }
  const std::string lock = slurp("/var/tmp/.ftrace-lock");
  if (!lock.empty() && kill(std::atoi(lock.c_str()), 0) != 0 && errno == ESRCH)
    unlink("/var/tmp/.ftrace-lock");  // its dead script's
}

// perf-tools' own iosnoop (Debian's perf-tools-unstable) on the same I/O at
// the same time (it on the top-level buffer, ours in its instance): the
// same I/O, by the same task, of the same type, on the same device. Its
// BLOCK and BYTES are not compared: it reads them by position from the
// kernel's text line, which on newer kernels ends with the I/O priority,
// and then prints "+" and 0 (examples/iosnoop_example.txt).
TEST_F(IosnoopRuntime, SameIoAsPerfToolsIosnoop) {
  PerfToolsPeer peer("iosnoop");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  // The script sets the top-level buffer size and leaves it so.
  const std::string size_kb = slurp("/sys/kernel/tracing/buffer_size_kb");
  Workload w("blockio", {loop_.path(), std::to_string(kWrites), std::to_string(kReads),
                         std::to_string(kWriteSize), std::to_string(kReadSize)});
  auto [mine, theirs] =
      trace_with_peer(peer, {tool_path("iosnoop"), "-d", loop_.name()}, {"-d", loop_.dev()}, w);
  if (!size_kb.empty()) std::ofstream("/sys/kernel/tracing/buffer_size_kb") << size_kb;
  if (theirs.exit_code != 0) undo_block_peer();
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  auto ios = [&](const std::string& out) {
    std::vector<std::string> v;
    for (const auto& l : lines_of(out)) {
      std::istringstream in(l);
      std::string comm, pid, type, dev;
      in >> comm >> pid >> type >> dev;
      if (pid == w.pid_str()) v.push_back(comm + " " + pid + " " + type + " " + dev);
    }
    return v;
  };
  auto a = ios(mine.out), b = ios(theirs.out);
  EXPECT_EQ(a.size(), static_cast<size_t>(kWrites + kReads)) << mine.out;
  // perf-tools' script reads COMM from the kernel's text lines, which print
  // "<...>" when the kernel's comm cache has not saved the task's name yet
  // (seen once, on its first I/O): that row's COMM is ours, the rest equal.
  const std::string unknown = "<...> ";
  for (size_t i = 0; i < b.size() && i < a.size(); ++i)
    if (b[i].starts_with(unknown) && a[i].ends_with(b[i].substr(unknown.size() - 1)))
      b[i] = a[i];
  EXPECT_EQ(a, b) << theirs.out.substr(0, 3000);
  expect_workload_rows(rows_of(mine.out, false), w.pid(), true, true, false);
}

// The histograms' counts, summed: every I/O of the workload.
long histogram_total(const std::string& out, int* histograms) {
  long total = 0;
  *histograms = 0;
  for (const auto& l : lines_of(out)) {
    if (l.find(">=(ms) .. <(ms)") != std::string::npos) ++*histograms;
    auto arrow = l.find(" -> "), colon = l.find(": ");
    if (arrow == std::string::npos || colon == std::string::npos) continue;
    total += std::stol(l.substr(colon + 2));
  }
  return total;
}

TEST_F(IosnoopRuntime, IolatencyCountsEveryIo) {
  auto r = trace("iolatency", {"-d", "DEV"}, nullptr);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing block I/O. Output every 1 seconds. Ctrl-C to end.");
  int n = 0;
  EXPECT_EQ(histogram_total(r.out, &n), kWrites + kReads) << r.out;
  EXPECT_GE(n, 1);
}

TEST_F(IosnoopRuntime, IolatencyReadsOnlyWithTimestamps) {
  auto r = trace("iolatency", {"-T", "-Q", "-i", "*R*", "-d", "DEV"}, nullptr);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int n = 0;
  EXPECT_EQ(histogram_total(r.out, &n), kReads) << r.out;
  long stamps = 0;
  for (const auto& l : lines_of(r.out))
    if (l.size() == 9 && l[2] == ':' && l[5] == ':' && l[8] == ':') ++stamps;
  EXPECT_EQ(stamps, n);
}

TEST_F(IosnoopRuntime, IolatencyIntervalAndCount) {
  auto r = run({tool_path("iolatency"), "-d", loop_.name(), "1", "2"}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing block I/O. Output every 1 seconds.");
  int n = 0;
  EXPECT_EQ(histogram_total(r.out, &n), 0);
  EXPECT_EQ(n, 2) << r.out;
  EXPECT_NE(r.out.find("Ending tracing..."), std::string::npos);
}

// perf-tools' own iolatency on the same I/O at the same time (it on the
// top-level buffer, ours in its instance), both every second. Ours counts
// every I/O. Theirs counts at most that many: without a snapshot buffer
// (CONFIG_TRACER_SNAPSHOT, absent here) it reads the buffer with "cat trace"
// and then clears it with "echo > trace", so the I/O that completes between
// the two is never counted. Its count is printed.
TEST_F(IosnoopRuntime, IolatencySameIoAsPerfToolsIolatency) {
  PerfToolsPeer peer("iolatency");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  // The script sets the top-level buffer size and leaves it so.
  const std::string size_kb = slurp("/sys/kernel/tracing/buffer_size_kb");
  Workload w("blockio", {loop_.path(), std::to_string(kWrites), std::to_string(kReads),
                         std::to_string(kWriteSize), std::to_string(kReadSize)});
  Running ours({tool_path("iolatency"), "-d", loop_.name(), "1"});
  ASSERT_TRUE(ours.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(peer.start({"-d", loop_.dev(), "1"}, std::string("sleep\0" "1\0", 8)))
      << peer.why_not();
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  // Two more histograms from each: both have read past the last I/O.
  const std::string header = ">=(ms) .. <(ms)";
  int ours_n = 0, theirs_n = 0;
  EXPECT_TRUE(ours.wait_for_stdout(header, 60, 2));
  EXPECT_TRUE(peer.wait_for_stdout(header, 2, 60));
  ours.signal(SIGINT);
  auto mine = ours.finish(60);
  auto theirs = peer.finish();
  if (!size_kb.empty()) std::ofstream("/sys/kernel/tracing/buffer_size_kb") << size_kb;
  if (theirs.exit_code != 0) undo_block_peer();
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  long a = histogram_total(mine.out, &ours_n), b = histogram_total(theirs.out, &theirs_n);
  EXPECT_EQ(a, kWrites + kReads) << mine.out;
  EXPECT_LE(b, kWrites + kReads) << theirs.out;
  EXPECT_GT(b, 0) << theirs.out;
  std::cout << "iolatency: " << a << " I/O in " << ours_n << " histograms; iolatency-perf: " << b
            << " in " << theirs_n << " (of " << kWrites + kReads << ")\n";
}

// Two iolatency runs at once on the same device, one ended by SIGTERM, the
// other by SIGHUP: each prints its last histogram with every I/O in it.
// Then a closed stdout (| head) ends a run at its next histogram. tracefs is
// clean after each (TracingTest).
TEST_F(IosnoopRuntime, IolatencyTwoRunsSignalsAndHead) {
  Workload w("blockio", {loop_.path(), std::to_string(kWrites), std::to_string(kReads),
                         std::to_string(kWriteSize), std::to_string(kReadSize)});
  Running a({tool_path("iolatency"), "-d", loop_.name(), "60"});
  Running b({tool_path("iolatency"), "-d", loop_.name(), "60"});
  ASSERT_TRUE(a.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(b.wait_for_stdout("Ctrl-C to end.\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  a.signal(SIGTERM);
  b.signal(SIGHUP);
  auto ra = a.finish(10), rb = b.finish(10);
  for (const auto* r : {&ra, &rb}) {
    EXPECT_FALSE(r->timed_out);
    EXPECT_EQ(r->exit_code, 0) << r->err;
    int n = 0;
    EXPECT_EQ(histogram_total(r->out, &n), kWrites + kReads) << r->out;
    EXPECT_EQ(n, 1) << r->out;
    EXPECT_NE(r->out.find("Ending tracing..."), std::string::npos) << r->out;
  }
  auto h = run({"/bin/sh", "-c", tool_path("iolatency") + " -d " + loop_.name() + " 1 | head -2"},
               30);
  EXPECT_FALSE(h.timed_out);
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(lines_of(h.out).size(), 2u) << h.out;
}

}  // namespace
}  // namespace tracekit::testing
