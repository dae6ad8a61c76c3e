// profile against workloads with known behaviour, on this kernel.
#include <gtest/gtest.h>
#include <optional>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "harness.hpp"
#include "kernel/features.hpp"

namespace tracekit::testing {
namespace {

class ProfileRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on all CPUs";
  }
  RunResult profile(std::vector<std::string> args) {
    args.insert(args.begin(), tool_path("profile"));
    return run(args, 60);
  }
};

bool has_frame(const std::vector<std::string>& frames, const std::string& name) {
  return std::find(frames.begin(), frames.end(), name) != frames.end();
}

// Samples (folded) whose stack holds func_a / func_b.
std::pair<unsigned long, unsigned long> ab_counts(const std::map<std::string, unsigned long>& f) {
  unsigned long a = 0, b = 0;
  for (auto& [stack, n] : f) {
    auto fr = frames_of(stack);
    if (has_frame(fr, "func_a")) a += n;
    if (has_frame(fr, "func_b")) b += n;
  }
  return {a, b};
}

// The workload spends about 3/4 of its CPU time in func_b, and measures the
// exact share of the profile's window (cpuratio_times: on this VM it has
// been 0.68 in a run). At 499 Hz for 4 s, about 2000 samples: the binomial
// standard deviation of the fraction is about 0.01, so +-0.06 is a 6-sigma
// band around the measured share.
constexpr double kTolerance = 0.06;

TEST_F(ProfileRuntime, FoldedRatioOfTwoFunctions) {
  Workload w("cpuratio");
  const CpuRatioTimes before = cpuratio_times(w);
  auto r = profile({"-F", "499", "-f", "-p", w.pid_str(), "4"});
  const double truth = b_fraction(before, cpuratio_times(w));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  ASSERT_FALSE(folded.empty()) << r.out;
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    EXPECT_EQ(fr[0], "cpuratio") << stack;  // folded lines start with the comm
  }
  auto [a, b] = ab_counts(folded);
  ASSERT_GT(a + b, 500u) << r.out;
  double frac = double(b) / double(a + b);
  EXPECT_NEAR(frac, truth, kTolerance) << "func_a " << a << " func_b " << b;
  // Callers resolve too: main is below both functions.
  bool main_below = false;
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    auto m = std::find(fr.begin(), fr.end(), "main");
    auto f = std::find(fr.begin(), fr.end(), "func_b");
    if (m != fr.end() && f != fr.end() && m < f) main_below = true;
  }
  EXPECT_TRUE(main_below) << r.out;
}

TEST_F(ProfileRuntime, MultilineRatioOfTwoFunctions) {
  Workload w("cpuratio");
  const CpuRatioTimes before = cpuratio_times(w);
  auto r = profile({"-F", "499", "-p", w.pid_str(), "4"});
  const double truth = b_fraction(before, cpuratio_times(w));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "Sampling at 499 Hertz of PID " + w.pid_str() + " by user + kernel stack for 4 secs.");
  auto recs = parse_multiline(r.out);
  ASSERT_FALSE(recs.empty()) << r.out;
  unsigned long a = 0, b = 0, prev = 0;
  for (auto& rec : recs) {
    EXPECT_EQ(rec.comm, "cpuratio");
    EXPECT_EQ(rec.pid, w.pid());
    EXPECT_GE(rec.value, prev) << "records must be sorted by count, ascending";
    prev = rec.value;
    if (has_frame(rec.frames, "func_a")) a += rec.value;
    if (has_frame(rec.frames, "func_b")) b += rec.value;
  }
  ASSERT_GT(a + b, 500u);
  EXPECT_NEAR(double(b) / double(a + b), truth, kTolerance) << "func_a " << a << " func_b " << b;
}

// A process in the kernel: kernel and user frames both resolve, and -d puts
// the delimiter between them.
TEST_F(ProfileRuntime, KernelAndUserSymbolsWithDelimiter) {
  Workload w("syscalls");
  auto r = profile({"-F", "199", "-df", "-p", w.pid_str(), "3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long with_both = 0, through_entry = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    auto dash = std::find(fr.begin(), fr.end(), "-");
    if (dash == fr.end()) continue;
    // user side: ... main;syscall_loop ; kernel side: entry ... leaf
    EXPECT_EQ(*(dash - 1), "syscall_loop") << stack;
    EXPECT_TRUE(has_frame(fr, "main")) << stack;
    for (auto it = dash + 1; it != fr.end(); ++it) EXPECT_NE(*it, "[unknown]") << stack;
    if (std::find(dash + 1, fr.end(), "entry_SYSCALL_64") != fr.end() ||
        std::find(dash + 1, fr.end(), "entry_SYSCALL_64_after_hwframe") != fr.end())
      through_entry += n;
    with_both += n;
  }
  EXPECT_GT(with_both, 50u) << r.out;
  // A sample can land where the kernel's unwinder stops early (in a
  // retpoline thunk, say); nearly all go back to the system call entry.
  EXPECT_GE(through_entry, with_both * 9 / 10) << r.out;
}

// Issue 38 (as stackcount -p): a process that existed before profile
// started and exited before its samples were read had "[unknown]" for a
// name and user frames. profile is stopped (SIGSTOP) while the workload
// runs and exits, so that every sample is read after the exit.
TEST_F(ProfileRuntime, ProcessThatExitsBeforeItsSamplesAreReadResolves) {
  std::optional<Workload> w(std::in_place, "getppid_n", std::vector<std::string>{"3000000"});
  const std::string pid = w->pid_str();
  Running t({tool_path("profile"), "-U", "-F", "199", "-f", "-p", pid});
  ASSERT_TRUE(wait_for_tracing(t.pid(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), 20));
  t.signal(SIGSTOP);
  w->go();
  ASSERT_TRUE(w->wait_line("done", 120));
  w.reset();  // killed and reaped
  t.signal(SIGCONT);
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long all = 0, resolved = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto frames = frames_of(stack);
    ASSERT_FALSE(frames.empty());
    EXPECT_EQ(frames[0], "getppid_n") << stack;
    all += n;
    if (std::find(frames.begin(), frames.end(), "do_getppids") != frames.end()) resolved += n;
  }
  ASSERT_GT(all, 10u) << r.out;
  EXPECT_GE(resolved * 10, all * 9) << r.out;
}

TEST_F(ProfileRuntime, KernelOnlyHasNoUserFrames) {
  Workload w("syscalls");
  auto r = profile({"-K", "-a", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  unsigned long kernel_frames = 0;
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    for (size_t i = 1; i < fr.size(); ++i) {
      EXPECT_TRUE(fr[i].size() > 4 && fr[i].substr(fr[i].size() - 4) == "_[k]") << stack;
      ++kernel_frames;
    }
  }
  EXPECT_GT(kernel_frames, 0u) << r.out;
}

TEST_F(ProfileRuntime, UserOnlyHasNoKernelFrames) {
  Workload w("syscalls");
  auto r = profile({"-U", "-a", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  unsigned long loop = 0;
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    for (auto& f : fr) EXPECT_EQ(f.find("_[k]"), std::string::npos) << stack;
    if (has_frame(fr, "syscall_loop")) loop += n;
  }
  EXPECT_GT(loop, 0u) << r.out;
  EXPECT_EQ(r.out.find("Sampling"), std::string::npos) << "no header in folded mode";
}

// With -I the idle task's samples appear as swapper/N (pid 0); without, never.
// Idle time of CPU 0 so far, in USER_HZ ticks (/proc/stat "cpu0" idle).
unsigned long cpu0_idle_ticks() {
  std::istringstream in(slurp("/proc/stat"));
  std::string name;
  unsigned long user, nice, sys, idle;
  while (in >> name) {
    if (name == "cpu0" && (in >> user >> nice >> sys >> idle)) return idle;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

TEST_F(ProfileRuntime, IdleOnlyWithDashI) {
  // CPU 0 only: on this kernel an idle CPU 1 takes no cpu-clock samples
  // (a tickless idle CPU is not sampled). The truth is how long CPU 0 was
  // idle meanwhile: a machine busy with other work may leave it none.
  unsigned long idle0 = cpu0_idle_ticks();
  auto idle = profile({"-I", "-K", "-f", "-F", "99", "-C", "0", "2"});
  unsigned long idle_ticks = cpu0_idle_ticks() - idle0;
  ASSERT_EQ(idle.exit_code, 0) << idle.err;
  unsigned long swapper = 0;
  for (auto& [stack, n] : parse_folded(idle.out))
    if (stack.rfind("swapper/", 0) == 0) swapper += n;
  if (idle_ticks < 50 && swapper == 0)
    GTEST_SKIP() << "CPU 0 was idle for only " << idle_ticks
                 << " ticks of 200 during the run: other work kept it busy";
  EXPECT_GT(swapper, 0u) << "CPU 0 idle for " << idle_ticks << " ticks\n" << idle.out;

  auto busy = profile({"-K", "-f", "-F", "99", "2"});
  ASSERT_EQ(busy.exit_code, 0) << busy.err;
  for (auto& [stack, n] : parse_folded(busy.out)) EXPECT_NE(stack.rfind("swapper/", 0), 0u) << stack;
}

TEST_F(ProfileRuntime, CpuOptionSamplesOneCpuOnly) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "needs 2 CPUs";
  Workload on0("cpuratio", {"0", "wl_cpu0"});
  Workload on1("cpuratio", {"0", "wl_cpu1"});
  on0.pin(0);
  on1.pin(1);
  const double cpu1_before = cpu_seconds(on1.pid());
  auto r = profile({"-C", "1", "-f", "-F", "199", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The truth: wl_cpu1 ran this long on CPU 1 while profile ran (a little
  // longer than profile sampled: its start and end are inside the window).
  const double cpu1 = cpu_seconds(on1.pid()) - cpu1_before;
  unsigned long n0 = 0, n1 = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    if (stack.rfind("wl_cpu0;", 0) == 0) n0 += n;
    if (stack.rfind("wl_cpu1;", 0) == 0) n1 += n;
  }
  EXPECT_EQ(n0, 0u) << r.out;
  EXPECT_GT(n1, 0u) << r.out;
  EXPECT_LE(static_cast<double>(n1), cpu1 * 199 * 1.1 + 10) << "ran " << cpu1 << " s\n" << r.out;
  EXPECT_GE(static_cast<double>(n1), (cpu1 - 0.5) * 199 * 0.8) << "ran " << cpu1 << " s\n" << r.out;
}

TEST_F(ProfileRuntime, PidListAndTidFilter) {
  Workload x("cpuratio", {"0", "wl_x"});
  Workload y("cpuratio", {"0", "wl_y"});
  Workload z("cpuratio", {"0", "wl_z"});
  auto r = profile({"-f", "-F", "99", "-p", x.pid_str() + "," + y.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, unsigned long> by_comm;
  for (auto& [stack, n] : parse_folded(r.out)) by_comm[frames_of(stack)[0]] += n;
  EXPECT_GT(by_comm["wl_x"], 0u) << r.out;
  EXPECT_GT(by_comm["wl_y"], 0u) << r.out;
  EXPECT_EQ(by_comm.size(), 2u) << r.out;

  auto t = profile({"-f", "-F", "99", "-L", z.pid_str(), "2"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  for (auto& [stack, n] : parse_folded(t.out)) EXPECT_EQ(frames_of(stack)[0], "wl_z") << stack;
  EXPECT_FALSE(t.out.empty());
}

struct BadInput {
  std::vector<std::string> args;
  int exit_code;
  std::string message;  // expected in the first stderr line
};

TEST_F(ProfileRuntime, BadInputIsRejectedClearly) {
  std::ifstream pid_max_file("/proc/sys/kernel/pid_max");
  long pid_max = 4194304;
  pid_max_file >> pid_max;
  const std::string missing_pid = std::to_string(pid_max - 1);  // never handed out this early
  const BadInput cases[] = {
      {{"-p", "notapid"}, 2, "PID"},
      {{"-F", "0"}, 2, "frequency"},
      {{"-K", "-U"}, 2, "-U and -K"},
      {{"-p", "1", "-L", "1"}, 2, "-p and -L"},
      {{"-F", "abc"}, 2, "abc"},
      {{"--no-such-flag"}, 2, "no-such-flag"},
      {{"-p", missing_pid, "1"}, 1, "no process with PID " + missing_pid},
      {{"-C", "4096", "1"}, 1, "CPU 4096 is not online"},
      {{"-F", "100000000", "1"}, 1, "above this kernel's limit"},
  };
  for (const auto& c : cases) {
    auto r = profile(c.args);
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.exit_code, c.exit_code) << first;
    EXPECT_NE(first.find(c.message), std::string::npos) << first;
    EXPECT_EQ(first.rfind("profile: ", 0), 0u) << first;
    if (c.exit_code == 2) {
      EXPECT_NE(r.err.find("USAGE: profile"), std::string::npos) << r.err;
    }
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(ProfileRuntime, HelpGoesToStdoutWithExitZero) {
  auto r = profile({"-h"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("USAGE: profile", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("examples:"), std::string::npos);
  EXPECT_TRUE(r.err.empty());
}

// A peer: perf record -g on the same workload agrees on the hottest user
// function (the leaf of the user stack in most samples).
TEST_F(ProfileRuntime, AgreesWithPerfOnHottestFunction) {
  if (access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "linux-perf not installed";
  Workload w("cpuratio");
  char dir[] = "/tmp/tracekit-perf-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string data = std::string(dir) + "/perf.data";
  auto rec = run({"/usr/bin/perf", "record", "-q", "-g", "-F", "499", "-o", data, "-p", w.pid_str(),
                  "--", "sleep", "3"},
                 60);
  ASSERT_EQ(rec.exit_code, 0) << rec.err;
  auto script = run({"/usr/bin/perf", "script", "-i", data, "-F", "ip,sym"}, 60);
  ASSERT_EQ(script.exit_code, 0) << script.err;
  unlink(data.c_str());
  rmdir(dir);
  // perf script -F ip,sym prints each sample's stack, leaf first, one frame a
  // line, samples separated by blank lines.
  std::map<std::string, unsigned long> perf_leaf;
  std::istringstream in(script.out);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t") == std::string::npos) {
      first = true;
      continue;
    }
    if (first) {
      std::istringstream ls(line);
      std::string addr, sym;
      ls >> addr >> sym;
      ++perf_leaf[sym];
      first = false;
    }
  }
  auto hottest = [](const std::map<std::string, unsigned long>& m) {
    return std::max_element(m.begin(), m.end(), [](auto& x, auto& y) { return x.second < y.second; })
        ->first;
  };
  ASSERT_FALSE(perf_leaf.empty()) << script.out.substr(0, 2000);
  auto ours = profile({"-U", "-f", "-F", "499", "-p", w.pid_str(), "3"});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  std::map<std::string, unsigned long> our_leaf;
  for (auto& [stack, n] : parse_folded(ours.out)) our_leaf[frames_of(stack).back()] += n;
  ASSERT_FALSE(our_leaf.empty());
  EXPECT_EQ(hottest(perf_leaf), "func_b");
  EXPECT_EQ(hottest(our_leaf), hottest(perf_leaf));
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// Ctrl-C, SIGTERM and SIGHUP end the run normally: the report of what was
// gathered is printed and the exit status is 0.
TEST_F(ProfileRuntime, StopSignalsStillPrintTheReport) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    Workload w("cpuratio");
    Running p({tool_path("profile"), "-F", "199", "-p", w.pid_str()});
    ASSERT_TRUE(p.wait_for_stdout("Hit Ctrl-C to end.\n", 10)) << "header never came";
    // Let samples accumulate: at 199 Hz, 0.5 s of a busy process is ~100.
    usleep(500000);
    p.signal(sig);
    auto r = p.finish(30);
    EXPECT_EQ(r.exit_code, 0) << "signal " << sig << ": " << r.err;
    unsigned long total = 0;
    for (auto& rec : parse_multiline(r.out)) total += rec.value;
    EXPECT_GT(total, 20u) << "signal " << sig << "\n" << r.out;
  }
}

// A reader that has gone away (`profile 1 | true`: the report is written to
// a closed pipe) ends the run with status 0 and no error message.
TEST_F(ProfileRuntime, ClosedStdoutEndsQuietly) {
  Workload w("cpuratio");
  auto r = run({"/bin/bash", "-c",
                tool_path("profile") + " -F 499 -p " + w.pid_str() +
                    " 1 | true; echo ${PIPESTATUS[0]}"},
               30);
  EXPECT_EQ(r.out, "0\n");
  EXPECT_TRUE(r.err.empty()) << r.err;
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// Processes that start and exit between two reads of the rings still get
// names and symbols (from COMM and MMAP2 records): profile samples three
// 30 ms runs of shortlived.
TEST_F(ProfileRuntime, ShortLivedProcessesResolve) {
  Running p({tool_path("profile"), "-F", "999", "-f", "3"});
  ASSERT_TRUE(wait_for_tracing(p.pid(), 1, 20));
  for (int i = 0; i < 3; ++i) {
    auto r = run({workload_path("shortlived")}, 30);
    ASSERT_EQ(r.exit_code, 0);
  }
  auto r = p.finish(30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = shortlived_samples(r.out);
  // About 90 samples of 90 ms of CPU; nearly all in shortlived_burn.
  EXPECT_GT(s.burn, 30u) << r.out;
  EXPECT_GE(s.burn, s.all * 8 / 10) << r.out;
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// Stacks deeper than perf's limit are cut by the kernel; profile says so,
// and counts exactly the samples it prints at the limit. Every sample of
// deep is 200 descend frames down, in burn_at_the_bottom or the clock it
// reads (now, clock_gettime, the vDSO: about one sample in 1,400). The kernel
// reads user frames with page faults off and ends the walk at a frame it
// cannot read: under two VM tiers' load, one stack of a run stopped 2
// frames short of the limit, so a few shorter ones are allowed; they are
// not counted as cut.
TEST_F(ProfileRuntime, StacksCutAtTheLimitAreReported) {
  Workload w("deep");
  auto r = profile({"-U", "-f", "-F", "199", "-p", w.pid_str(), "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string cut_at = " stacks were cut at 127 frames";
  const auto at = r.err.find(cut_at);
  ASSERT_NE(at, std::string::npos) << r.err;
  const auto from = r.err.rfind(' ', at - 1) + 1;
  const unsigned long cut = std::stoul(r.err.substr(from, at - from));
  unsigned long at_limit = 0, shorter = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    ASSERT_GE(fr.size(), 3u) << stack;
    EXPECT_LE(fr.size(), 128u) << stack;  // comm + 127 frames
    (fr.size() == 128 ? at_limit : shorter) += n;
    const auto burn = std::find(fr.begin(), fr.end(), "burn_at_the_bottom");
    ASSERT_NE(burn, fr.end()) << stack;
    EXPECT_LE(fr.end() - burn, 3) << stack;
    EXPECT_TRUE(std::all_of(fr.begin() + 1, burn, [](const std::string& f) {
      return f == "descend";
    })) << stack;
  }
  // Without exclude_callchain_kernel (its fallback), a sample taken in the
  // kernel spends part of the 127 on kernel frames, which -U then drops: it
  // is cut, but printed shorter.
  if (kernel::Features::host().has(kernel::Feature::kExcludeCallchain)) {
    EXPECT_EQ(cut, at_limit) << r.err;
  }
  EXPECT_LE(at_limit, cut) << r.err;
  EXPECT_LE(cut, at_limit + shorter) << r.err;
  EXPECT_GT(at_limit, 0u);
  EXPECT_LE(shorter * 10, at_limit) << r.out;
}

}  // namespace
}  // namespace tracekit::testing

namespace tracekit::testing {
namespace {

// Full tables are reported, as bcc does: stacks that did not fit print as
// "[Missed User Stack]", keys that did not fit are dropped and counted.
TEST_F(ProfileRuntime, FullTablesAreReported) {
  Workload w("cpuratio");
  auto stacks = profile({"-U", "-F", "199", "-p", w.pid_str(), "--stack-storage-size", "1", "1"});
  ASSERT_EQ(stacks.exit_code, 0) << stacks.err;
  EXPECT_NE(stacks.err.find("stack traces could not be displayed. Consider increasing "
                            "--stack-storage-size."),
            std::string::npos)
      << stacks.err;
  EXPECT_NE(stacks.out.find("    [Missed User Stack]"), std::string::npos) << stacks.out;

  auto keys = profile({"-U", "-F", "199", "-p", w.pid_str(), "--hash-storage-size", "1", "1"});
  ASSERT_EQ(keys.exit_code, 0) << keys.err;
  EXPECT_NE(keys.err.find("samples dropped: the key table is full. Consider increasing "
                          "--hash-storage-size."),
            std::string::npos)
      << keys.err;
  EXPECT_EQ(parse_multiline(keys.out).size(), 1u) << keys.out;
}

// -o writes the same report as stdout: a folded file is byte for byte the
// folded output of the same run, the text file has the same stacks and
// counts, and nothing else is left beside them.
TEST_F(ProfileRuntime, OutputFilesHoldTheSameReportAsStdout) {
  Workload w("cpuratio");
  TempDir dir;
  auto r = profile({"-F", "199", "-f", "-p", w.pid_str(), "-o", dir / "p.folded", "-o",
                    dir / "p.txt", "-o", dir / "p.svg", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(parse_folded(r.out).empty()) << r.out;
  EXPECT_EQ(slurp(dir / "p.folded"), r.out);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"p.folded", "p.svg", "p.txt"}));
  // The flame graph: titled with the command line, both functions drawn
  // (the browser tier checks the drawing itself).
  std::string svg = slurp(dir / "p.svg");
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u) << svg.substr(0, 200);
  EXPECT_TRUE(contains(svg, "profile -F 199 -f -p " + w.pid_str())) << svg.substr(0, 2000);
  EXPECT_TRUE(contains(svg, "<title>func_a (") && contains(svg, "<title>func_b ("))
      << svg.substr(0, 2000);
  EXPECT_NE(r.err.find("profile: wrote " + dir / "p.svg" + " (flame graph, "), std::string::npos)
      << r.err;
  std::map<std::string, unsigned long> from_text;
  for (auto& rec : parse_multiline(slurp(dir / "p.txt"))) {
    std::string stack = rec.comm;
    for (auto it = rec.frames.rbegin(); it != rec.frames.rend(); ++it) stack += ";" + *it;
    from_text[stack] += rec.value;
  }
  EXPECT_EQ(from_text, parse_folded(r.out)) << slurp(dir / "p.txt");
  EXPECT_NE(r.err.find("profile: wrote " + dir / "p.folded" + " (folded stacks, "),
            std::string::npos)
      << r.err;
}

TEST_F(ProfileRuntime, OutputFileProblemsAreSaidBeforeProfiling) {
  TempDir dir;
  auto r = profile({"-o", dir / "nodir/p.svg", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err, "profile: cannot write '" + dir / "nodir/p.svg" + "': " + dir / "nodir" +
                       ": No such file or directory\n");
  EXPECT_EQ(r.out, "");
  r = profile({"-o", dir / "p.png", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')),
            "profile: cannot tell the format of '" + dir / "p.png" +
                "' from its name (.svg .pb.gz .pprof .speedscope.json .json .folded .txt): add "
                "--format");
  EXPECT_TRUE(dir.names().empty());
}

}  // namespace
}  // namespace tracekit::testing
