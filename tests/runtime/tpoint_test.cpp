// tpoint against the reads workload (tests/workloads/reads.c), which makes a
// known number of read(2) calls of known sizes after a SIGUSR1: exact event
// counts live, buffered (-d), with a kernel filter, per thread (-L), with
// stacks (-s); the event text against the kernel's own trace file and
// against perf-tools' tpoint; bad input.
#include <gtest/gtest.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "feature_table/feature_table.hpp"
#include "ftrace/reader.hpp"
#include "harness.hpp"
#include "kernel/features.hpp"
#include "output/event_text.hpp"
#include "session/saved_comms.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::testing {
namespace {

constexpr long kReads = 997;  // a prime

// How many of reads(n, m)'s calls ask for at most max_count bytes.
long reads_at_most(long n, long m, long max_count) {
  long k = 0;
  for (long i = 0; i < n; ++i) k += (i % m + 1) <= max_count;
  return k;
}

// The text of an event line after its flags column ("512.123456: name: ...").
std::string after_flags(const std::string& line) {
  auto cpu = line.find("] ");
  if (cpu == std::string::npos) return line;
  auto flags_end = line.find(' ', cpu + 2);
  return flags_end == std::string::npos ? line : std::string(trim(line.substr(flags_end)));
}

// The text of an event line after its timestamp ("name: ...").
std::string after_time(const std::string& line) {
  auto t = after_flags(line);
  auto colon = t.find(": ");
  return colon == std::string::npos ? t : t.substr(colon + 2);
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& a : v) s += (s.empty() ? "" : " ") + a;
  return s;
}

size_t count_with(const std::string& out, const std::string& text) {
  size_t n = 0;
  for (const auto& l : lines_of(out)) n += l.find(text) != std::string::npos;
  return n;
}

// Without syscall tracepoints (a kernel without CONFIG_FTRACE_SYSCALLS, or
// scripts/check's pass with TRACEKIT_KERNEL_FEATURES=-syscall_tracepoints),
// tpoint traces raw_syscalls:sys_enter with an id filter and prints its
// records as the kernel does, named back by their id:
// "sys_enter_read: NR 0 (3, 55d0c0e0a000, 1, 0, 0, 0)" for what is
// "sys_read(fd: 3, buf: 0x55d0c0e0a000, count: 1)" with them.
bool raw_syscalls() {
  return !kernel::Features::host().has(kernel::Feature::kSyscallTracepoints);
}

// What tpoint says once on stderr when raw_syscalls stands in.
std::string syscalls_note() {
  return syscalls::fallback_note(kernel::forced_off(kernel::Feature::kSyscallTracepoints));
}

// The text that marks a read's entry line either way.
std::string read_entry() {
  return raw_syscalls() ? " sys_enter_read: NR " + std::to_string(SYS_read) + " (" : " sys_read(";
}

// The third argument of a read's entry line: "count: 1)" or, raw, the
// third of the hex arguments.
std::string read_count(const std::string& line) {
  if (!raw_syscalls()) {
    auto at = line.find("count: ");
    return at == std::string::npos ? "" : line.substr(at + 7, line.find(')', at) - at - 7);
  }
  auto at = line.find(read_entry());
  if (at == std::string::npos) return "";
  auto args = split(line.substr(at + read_entry().size()), ',');
  return args.size() < 3 ? "" : std::string(trim(args[2]));
}

class TpointRuntime : public TracingTest {
 protected:
  // Runs tpoint with args ("PID" replaced by the workload's) while a reads
  // workload of n reads (sizes i % m + 1) does its reads once; ends it with
  // SIGINT unless it ends by itself (-d).
  RunResult trace_reads(std::vector<std::string> args, long n = kReads, long m = 1,
                        bool ends_itself = false) {
    Workload w("reads", {std::to_string(n), std::to_string(m)});
    for (auto& a : args)
      if (a == "PID") a = w.pid_str();
    args.insert(args.begin(), tool_path("tpoint"));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout(ends_itself ? "(buffered)...\n" : "Ctrl-C to end.\n", 60))
        << "no header";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    pid_ = w.pid();
    if (!ends_itself) t.signal(SIGINT);
    return t.finish(60);
  }
  pid_t pid_ = 0;
};

TEST_F(TpointRuntime, LiveCountIsExact) {
  auto r = trace_reads({"-p", "PID", "syscalls:sys_enter_read"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_with(r.out, read_entry()), static_cast<size_t>(kReads))
      << r.out.substr(0, 2000);
  const std::string who = "reads-" + std::to_string(pid_) + " ";
  for (const auto& l : lines_of(r.out))
    if (l.find(read_entry()) != std::string::npos) {
      EXPECT_NE(l.find(who), std::string::npos) << l;
      EXPECT_EQ(read_count(l), "1") << l;
    }
  // Said once, on stderr, when raw_syscalls stands in.
  EXPECT_EQ(count_with(r.err, "tracing raw_syscalls with an id filter"), raw_syscalls() ? 1u : 0u)
      << r.err;
  EXPECT_NE(r.out.find("\nEnding tracing...\n"), std::string::npos) << r.out.substr(r.out.size() - 200);
  EXPECT_EQ(lines_of(r.out)[0], "Tracing syscalls:sys_enter_read. Ctrl-C to end.");
}

TEST_F(TpointRuntime, KernelFilterSelectsAKnownSubset) {
  if (raw_syscalls()) {
    // raw_syscalls:sys_enter has no "count" (its arguments are args[6],
    // which filters cannot index): refused, with the reason. Its own
    // fields filter, joined with the id filter: a wildcard's reads only,
    // or nothing.
    auto refused = run({tool_path("tpoint"), "syscalls:sys_enter_read", "count <= 3"}, 60);
    EXPECT_EQ(refused.exit_code, 1) << refused.err;
    EXPECT_NE(refused.err.find("the filter applies to raw_syscalls:sys_enter"), std::string::npos)
        << refused.err;
    const std::string read = "id == " + std::to_string(SYS_read);
    auto r = trace_reads({"-p", "PID", "syscalls:sys_enter_rea*", read}, kReads, 10);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count_with(r.out, read_entry()), static_cast<size_t>(kReads));
    auto none = trace_reads({"-p", "PID", "syscalls:sys_enter_rea*", "id != " + std::to_string(SYS_read)},
                            kReads, 10);
    ASSERT_EQ(none.exit_code, 0) << none.err;
    EXPECT_EQ(count_with(none.out, " sys_enter_"), 0u) << none.out.substr(0, 2000);
    return;
  }
  auto r = trace_reads({"-p", "PID", "syscalls:sys_enter_read", "count <= 3"}, kReads, 10);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_with(r.out, " sys_read("),
            static_cast<size_t>(reads_at_most(kReads, 10, 3)));
}

// A wildcard naming several syscalls, both sides: each record named by its
// own syscall and side (raw: by the record's id), the counts exact.
TEST_F(TpointRuntime, WildcardNamesEachSyscall) {
  auto r = trace_reads({"-p", "PID", "syscalls:sys_*_rea*"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string nr = std::to_string(SYS_read);
  const std::string exit = raw_syscalls() ? " sys_exit_read: NR " + nr + " = 1" : " sys_read -> 0x1";
  EXPECT_EQ(count_with(r.out, read_entry()), static_cast<size_t>(kReads)) << r.out.substr(0, 2000);
  EXPECT_EQ(count_with(r.out, exit), static_cast<size_t>(kReads)) << r.out.substr(0, 2000);
  // Nothing else: the workload makes no other rea* syscall meanwhile.
  EXPECT_EQ(count_with(r.out, ": "), static_cast<size_t>(2 * kReads)) << r.out.substr(0, 2000);
}

TEST_F(TpointRuntime, BufferedCountIsExact) {
  auto r = trace_reads({"-d", "3", "-p", "PID", "syscalls:sys_enter_read"}, kReads, 1, true);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing syscalls:sys_enter_read for 3 seconds (buffered)...");
  EXPECT_EQ(count_with(r.out, read_entry()), static_cast<size_t>(kReads));
  // Nothing on stderr but, with set_event_pid or event-fork missing (or
  // forced off), the warning that later threads are not followed, and
  // without syscall tracepoints, that raw_syscalls stands in.
  std::string err;
  for (const auto& l : lines_of(r.err))
    if (l.find("cannot follow forks") == std::string::npos &&
        l != "tpoint: " + syscalls_note())
      err += l + "\n";
  EXPECT_EQ(err, "");
}

TEST_F(TpointRuntime, ThreadFilterAndHeaders) {
  auto r = trace_reads({"-H", "-L", "PID", "syscalls:sys_enter_read"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count_with(r.out, read_entry()), static_cast<size_t>(kReads));
  EXPECT_NE(r.out.find("# tracer: nop\n"), std::string::npos) << r.out.substr(0, 1000);
  EXPECT_NE(r.out.find("#           TASK-PID"), std::string::npos) << r.out.substr(0, 1000);
}

TEST_F(TpointRuntime, StacksFollowEachEvent) {
  auto r = trace_reads({"-s", "-p", "PID", "syscalls:sys_enter_read"}, 101);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto ls = lines_of(r.out);
  size_t events = 0, stacks = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (ls[i].find(read_entry()) != std::string::npos) {
      ++events;
      ASSERT_LT(i + 2, ls.size());
      EXPECT_NE(ls[i + 1].find(": <stack trace>"), std::string::npos) << ls[i + 1];
      EXPECT_EQ(ls[i + 2].rfind(" => ", 0), 0u) << ls[i + 2];
    }
    if (ls[i].find(": <stack trace>") != std::string::npos) ++stacks;
  }
  EXPECT_EQ(events, 101u);
  EXPECT_EQ(stacks, 101u);
  EXPECT_NE(r.out.find(" => do_syscall_64\n"), std::string::npos) << r.out.substr(0, 3000);
}

// Our text for the events of one instance, read raw, against the kernel's
// trace file for the same events: equal apart from the flags column.
TEST_F(TpointRuntime, LinesMatchTheKernelsTraceFile) {
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  Workload w("reads", {"50", "7"});
  auto inst = tracefs::Instance::create(*dir);
  ASSERT_TRUE(inst) << inst.error().str();
  ASSERT_TRUE(inst->set_filter("syscalls", "sys_enter_read", "common_pid == " + w.pid_str()));
  ASSERT_TRUE(inst->enable_event("syscalls", "sys_enter_read"));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  ASSERT_TRUE(inst->set_tracing_on(false));
  auto kernel = inst->read("trace");
  ASSERT_TRUE(kernel) << kernel.error().str();
  auto reader = ftrace::Reader::open(*dir, inst->name(), {"syscalls"}, ftrace::StackKinds{});
  ASSERT_TRUE(reader) << reader.error().str();
  auto cmdlines = session::parse_saved_cmdlines(slurp(*dir + "/saved_cmdlines"));
  output::EventText text(
      reader->tep(),
      [&](int pid) {
        return cmdlines.count(pid) ? cmdlines[pid] : std::string(session::kUnknownComm);
      },
      nullptr, kernel->find("migrate-disable") != std::string::npos);
  std::vector<std::pair<uint64_t, std::string>> ours;
  reader->flush([&](const ftrace::Event& e) {
    std::string line;
    text.print(line, e);
    ours.emplace_back(e.ts, std::move(line));
  });
  std::stable_sort(ours.begin(), ours.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> theirs;
  for (const auto& l : lines_of(*kernel))
    if (!l.empty() && l[0] != '#') theirs.push_back(l);
  ASSERT_EQ(ours.size(), 50u);
  ASSERT_EQ(theirs.size(), 50u);
  for (size_t i = 0; i < ours.size(); ++i) {
    std::string mine = ours[i].second.substr(0, ours[i].second.size() - 1);  // the newline
    // Context up to the flags, then everything after them.
    EXPECT_EQ(mine.substr(0, mine.find("] ") + 2), theirs[i].substr(0, theirs[i].find("] ") + 2));
    EXPECT_EQ(after_flags(mine), after_flags(theirs[i]));
  }
}

TEST_F(TpointRuntime, ListAndFormat) {
  auto l = run({tool_path("tpoint"), "-l", "syscalls:sys_enter_rea*"});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("syscalls:sys_enter_read\n"), std::string::npos) << l.out;
  for (const auto& line : lines_of(l.out)) EXPECT_EQ(line.rfind("syscalls:sys_enter_rea", 0), 0u);
  auto v = run({tool_path("tpoint"), "-v", "syscalls:sys_enter_read"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  if (raw_syscalls()) {
    // The format of the event traced: raw_syscalls:sys_enter's.
    EXPECT_EQ(v.out.rfind("name: sys_enter\n", 0), 0u) << v.out;
    EXPECT_NE(v.out.find("field:unsigned long args[6];"), std::string::npos) << v.out;
  } else {
    EXPECT_EQ(v.out.rfind("name: sys_enter_read\n", 0), 0u) << v.out;
    EXPECT_NE(v.out.find("field:size_t count;"), std::string::npos) << v.out;
  }
  EXPECT_NE(v.out.find("print fmt: "), std::string::npos) << v.out;
}

TEST_F(TpointRuntime, BadInputIsRefusedAndLeavesNothing) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const Case cases[] = {
      {{"nosuchcategory:nosuchevent"}, 1, "tracepoint nosuchcategory:nosuchevent not found"},
      {{"syscalls:sys_enter_read", "no_such_field == 1"}, 1, "no_such_field"},
      {{"syscalls:sys_enter_read", "count =="}, 1, "filter"},
      {{"-p", "4194000", "syscalls:sys_enter_read"}, 1, "no process with PID 4194000"},
      {{"-L", "4194000", "syscalls:sys_enter_read"}, 1, "no thread with TID 4194000"},
      {{"sys_enter_read"}, 2, "not category:event"},
      {{"-p", "1", "-L", "1", "syscalls:sys_enter_read"}, 2, "either -p or -L"},
      {{"-v", "-d", "1", "syscalls:sys_enter_read"}, 2, "-v"},
      {{}, 2, "missing required argument 'tracepoint'"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{tool_path("tpoint")};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv, 60);
    EXPECT_EQ(r.exit_code, c.code) << join(c.args) << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << join(c.args) << "\n" << r.err;
    EXPECT_EQ(tracefs_snapshot(), before_) << join(c.args);
  }
}

// A kernel without error_log (before 5.2; forced here): a refused filter is
// still reported, with errno and the filter, without the kernel's words.
TEST_F(TpointRuntime, RefusalWithoutErrorLog) {
  const std::vector<std::string> argv{tool_path("tpoint"), "syscalls:sys_enter_read",
                                      "no_such_field == 1"};
  // (Instead of whatever the fallback pass of scripts/check forces.)
  RunResult with, without;
  {
    ForcedFeatures none("", false);
    with = run(argv, 60);
  }
  {
    ForcedFeatures forced("-error_log", false);
    without = run(argv, 60);
  }
  EXPECT_EQ(with.exit_code, 1) << with.err;
  EXPECT_NE(with.err.find("error_log: "), std::string::npos) << with.err;
  EXPECT_EQ(without.exit_code, 1) << without.err;
  EXPECT_EQ(without.err.find("error_log"), std::string::npos) << without.err;
  EXPECT_NE(without.err.find("cannot write \"no_such_field == 1\""), std::string::npos)
      << without.err;
  EXPECT_NE(without.err.find("Invalid argument"), std::string::npos) << without.err;
  EXPECT_EQ(tracefs_snapshot(), before_);
}

// A syscall nobody knows: not found where there are syscall tracepoints;
// without them, libseccomp has no number for it, which is said (no errno).
TEST_F(TpointRuntime, UnknownSyscallIsAClearError) {
  const std::string message =
      raw_syscalls()
          ? "tpoint: cannot trace syscalls:sys_enter_no_such_call: no system call named "
            "\"no_such_call\" on this architecture"
          : "tpoint: tracepoint syscalls:sys_enter_no_such_call not found";
  auto r = run({tool_path("tpoint"), "syscalls:sys_enter_no_such_call"}, 60);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind(message, 0), 0u) << r.err;
  auto c = run({tool_path("stackcount"), "t:syscalls:sys_enter_no_such_call"}, 60);
  EXPECT_EQ(c.exit_code, 1) << c.err;
  EXPECT_NE(c.err.find(raw_syscalls() ? "no system call named \"no_such_call\""
                                      : "0 tracepoints matched"),
            std::string::npos)
      << c.err;
  EXPECT_EQ(tracefs_snapshot(), before_);
}

// perf-tools' own tpoint (Debian's perf-tools-unstable) tracing the same
// events at the same time as ours (perf-tools on the top-level buffer, ours
// in its instance): the same number, and the same text after the timestamp.
TEST_F(TpointRuntime, SameEventsAsPerfToolsTpoint) {
  if (kernel::forced_off(kernel::Feature::kInstances))
    GTEST_SKIP() << "without instances ours traces at the top level too, where perf-tools' lock "
                    "admits one of the two at a time (TopLevelRuntime tests that lock)";
  PerfToolsPeer peer("tpoint");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  Workload w("reads", {"101", "7"});
  // Without syscall tracepoints, perf-tools traces what ours stands in
  // with: raw_syscalls:sys_enter filtered to read's id (and, as perf-tools
  // takes either -p or a filter, to the single-threaded workload's pid); the
  // text after the name is the kernel's either way.
  const std::string nr = std::to_string(SYS_read);
  std::vector<std::string> peer_args{"-p", w.pid_str(), "syscalls:sys_enter_read"};
  if (raw_syscalls())
    peer_args = {"raw_syscalls:sys_enter", "id == " + nr + " && common_pid == " + w.pid_str()};
  const std::string theirs_entry = raw_syscalls() ? " sys_enter: NR " + nr + " (" : " sys_read(";
  auto [mine, theirs] = trace_with_peer(
      peer, {tool_path("tpoint"), "-p", w.pid_str(), "syscalls:sys_enter_read"}, peer_args, w);
  ASSERT_EQ(mine.exit_code, 0) << mine.err;
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  // Raw, the names differ (sys_enter_read, sys_enter): compare what
  // follows them.
  auto text = [](const std::string& l) {
    std::string t = after_time(l);
    if (!raw_syscalls()) return t;
    auto colon = t.find(": ");
    return colon == std::string::npos ? t : t.substr(colon + 2);
  };
  std::map<std::string, int> a, b;
  for (const auto& l : lines_of(mine.out))
    if (l.find(read_entry()) != std::string::npos) ++a[text(l)];
  for (const auto& l : lines_of(theirs.out))
    if (l.find(theirs_entry) != std::string::npos) ++b[text(l)];
  EXPECT_EQ(count_with(theirs.out, theirs_entry), 101u) << theirs.out.substr(0, 2000);
  EXPECT_EQ(count_with(mine.out, read_entry()), 101u);
  EXPECT_EQ(a, b);
  std::cout << "ours:   " << lines_of(mine.out)[1] << "\ntheirs: " << lines_of(theirs.out)[1]
            << "\n";
}

// One thread moves between CPUs 0 and 1 every kBlock getppid calls while
// tpoint (a kernel filter on its tid, so that nothing holds events back)
// prints them: more text than the printer keeps before writing (256 KiB),
// read from both CPUs' rings in one pass. A single thread's events are in
// time order, so every line must be: timestamps never go back, and the CPU
// column changes exactly where the thread moved.
TEST_F(TpointRuntime, TwoCpusPrintInTimeOrder) {
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  if (CPU_COUNT(&before) < 2 || !CPU_ISSET(0, &before) || !CPU_ISSET(1, &before))
    GTEST_SKIP() << "needs CPUs 0 and 1 (this one has " << CPU_COUNT(&before) << " usable)";
  constexpr int kBlocks = 40, kBlock = 601;
  std::atomic<pid_t> tid{0};
  std::atomic<bool> go{false}, done{false};
  std::thread caller([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    while (!go) usleep(1000);
    for (int b = 0; b < kBlocks; ++b) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(b % 2, &one);
      if (sched_setaffinity(0, sizeof one, &one) != 0) break;
      for (int i = 0; i < kBlock; ++i) syscall(SYS_getppid);
    }
    done = true;
  });
  while (tid == 0) usleep(1000);
  Running t({tool_path("tpoint"), "syscalls:sys_enter_getppid",
             "common_pid == " + std::to_string(tid.load())});
  bool ready = t.wait_for_stdout("Ctrl-C to end.\n", 60);
  go = true;
  // Read tpoint's output while the thread calls (a pipe holds 64 KiB).
  while (!done) t.wait_for_stdout("\x01", 0.05);
  caller.join();
  ASSERT_TRUE(ready) << "no header";
  // Until every line is out (a poll interval or so), then stop it.
  t.wait_for_stdout("getppid", 10, kBlocks * kBlock + 1);  // the header names it too
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::pair<double, int>> seen;  // time, CPU
  for (const auto& l : lines_of(r.out)) {
    auto open = l.find("] ");
    if (l.find("getppid") == std::string::npos || open == std::string::npos) continue;
    auto cpu = l.rfind('[', open);
    auto colon = l.find(": ", open);
    ASSERT_TRUE(cpu != std::string::npos && colon != std::string::npos) << l;
    auto stamp = l.rfind(' ', colon);
    seen.emplace_back(std::stod(l.substr(stamp + 1, colon - stamp - 1)),
                      std::stoi(l.substr(cpu + 1, open - cpu - 1)));
  }
  ASSERT_EQ(seen.size(), static_cast<size_t>(kBlocks * kBlock)) << r.err;
  int moves = 0;
  for (size_t i = 1; i < seen.size(); ++i) {
    ASSERT_LE(seen[i - 1].first, seen[i].first) << "line " << i;
    moves += seen[i].second != seen[i - 1].second;
  }
  EXPECT_EQ(seen.front().second, 0);
  EXPECT_EQ(moves, kBlocks - 1);
}

// Two runs at once, each on its own instance: both exact.
TEST_F(TpointRuntime, TwoRunsAtOnceStayExact) {
  Workload a("reads", {"211", "1"});
  Workload b("reads", {"307", "1"});
  if (kernel::forced_off(kernel::Feature::kInstances)) {
    // Without instances both would trace at the top level: perf-tools' lock
    // admits the first, the second is refused naming it.
    Running ta({tool_path("tpoint"), "-p", a.pid_str(), "syscalls:sys_enter_read"});
    ASSERT_TRUE(ta.wait_for_stdout("Ctrl-C to end.\n", 60));
    auto rb = run({tool_path("tpoint"), "-p", b.pid_str(), "syscalls:sys_enter_read"}, 60);
    EXPECT_EQ(rb.exit_code, 1);
    EXPECT_NE(rb.err.find("ftrace is in use by PID " + std::to_string(ta.pid())),
              std::string::npos)
        << rb.err;
    kill(a.pid(), SIGUSR1);
    ASSERT_TRUE(a.wait_line("done", 60));
    ta.signal(SIGINT);
    auto ra = ta.finish(60);
    ASSERT_EQ(ra.exit_code, 0) << ra.err;
    EXPECT_EQ(count_with(ra.out, read_entry()), 211u);
    return;
  }
  Running ta({tool_path("tpoint"), "-p", a.pid_str(), "syscalls:sys_enter_read"});
  Running tb({tool_path("tpoint"), "-p", b.pid_str(), "syscalls:sys_enter_read"});
  ASSERT_TRUE(ta.wait_for_stdout("Ctrl-C to end.\n", 60));
  ASSERT_TRUE(tb.wait_for_stdout("Ctrl-C to end.\n", 60));
  kill(a.pid(), SIGUSR1);
  kill(b.pid(), SIGUSR1);
  ASSERT_TRUE(a.wait_line("done", 60));
  ASSERT_TRUE(b.wait_line("done", 60));
  ta.signal(SIGINT);
  tb.signal(SIGINT);
  auto ra = ta.finish(60), rb = tb.finish(60);
  ASSERT_EQ(ra.exit_code, 0) << ra.err;
  ASSERT_EQ(rb.exit_code, 0) << rb.err;
  EXPECT_EQ(count_with(ra.out, read_entry()), 211u);
  EXPECT_EQ(count_with(rb.out, read_entry()), 307u);
}

// The comm column and a string field (sched_process_exec's filename) hold
// what a user chose (tests/workloads/hostile.c): newlines and ESC print as
// '?', each event one line; ordinary text as the kernel's trace file has it.
TEST_F(TpointRuntime, ControlCharactersCannotForgeLines) {
  auto h = run_against_hostile(
      {tool_path("tpoint"), "-p", "PID", "syscalls:sys_enter_getppid"}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  long calls = 0;
  const std::string context = "ev?[2J?il-" + std::to_string(h.pid) + " ";
  for (const auto& l : lines_of(h.r.out)) {
    // raw_syscalls' print, where syscall tracepoints are forced off.
    if (l.find("sys_getppid()") == std::string::npos &&
        l.find("sys_enter_getppid: NR ") == std::string::npos)
      continue;
    ++calls;
    EXPECT_EQ(l.rfind("       " + context, 0), 0u) << l;
  }
  EXPECT_EQ(calls, 7) << h.r.out.substr(0, 3000);

  auto e = run_against_hostile({tool_path("tpoint"), "sched:sched_process_exec"}, "Ctrl-C to end.\n");
  ASSERT_TRUE(e.done);
  ASSERT_EQ(e.r.exit_code, 0) << e.r.err;
  EXPECT_EQ(terminal_controls(e.r.out), "");
  const std::string file = "filename=/tmp/tracekit-hostile." + std::to_string(e.pid) + "?sshd pid=";
  long execs = 0;
  for (const auto& l : lines_of(e.r.out)) {
    EXPECT_NE(l.rfind("sshd pid=", 0), 0u) << "a forged line: " << l;
    if (l.find(file) != std::string::npos) ++execs;
  }
  EXPECT_EQ(execs, 1) << e.r.out.substr(0, 3000);
}

}  // namespace
}  // namespace tracekit::testing
