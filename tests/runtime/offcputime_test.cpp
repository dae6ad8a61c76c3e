// offcputime against a workload that blocks for known totals in known
// functions (tests/workloads/offcpu.c), on this kernel.
#include <gtest/gtest.h>

#include <memory>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <fstream>
#include <sstream>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"

namespace tracekit::testing {
namespace {

constexpr double kSleepUs = 37 * 20000;  // sleep_known: 37 x 20 ms
constexpr double kPollUs = 10 * 50000;   // poll_known: 10 x 50 ms
constexpr double kNapUs = 50 * 2000;     // nap_short: 50 x 2 ms

// The truth for a phase of the offcpu workload: the wall time it measured
// ("took FUNCTION US"), which is its off-CPU time, wake-up waits for a busy
// CPU included; at least the nominal time above. nominal if not printed.
double took(const Workload& w, const std::string& fn, double nominal) {
  const std::string key = "took " + fn + " ";
  for (const auto& l : w.lines())
    if (l.rfind(key, 0) == 0) return std::stod(l.substr(key.size()));
  ADD_FAILURE() << "the workload did not say how long " << fn << " took";
  return nominal;
}

// The wall time of each of a phase's blocking calls ("blocks FUNCTION US
// ..."): on a busy machine a 20 ms sleep can take 35 ms, so the truth for -m
// and -M is which calls the machine made long, not which were asked long.
std::vector<double> blocks(const Workload& w, const std::string& fn) {
  const std::string key = "blocks " + fn + " ";
  std::vector<double> us;
  for (const auto& l : w.lines())
    if (l.rfind(key, 0) == 0) {
      std::istringstream in(l.substr(key.size()));
      for (double d; in >> d;) us.push_back(d);
    }
  if (us.empty()) ADD_FAILURE() << "the workload did not list the blocks of " << fn;
  return us;
}

// What offcputime -m/-M should count of a phase's calls: the calls surely
// kept (wall time clearly inside [min_us, max_us]), and the time that may or
// may not count: calls too close to a bound to say (their wall time is a
// little above the blocked time the kernel saw: the system call's entry and
// exit), and the phase's time outside its calls, where a busy machine may
// preempt it.
struct Expected {
  double sure = 0, unsure = 0;
};
Expected kept_blocks(const Workload& w, const std::string& fn, double min_us, double max_us) {
  constexpr double kMargin = 2000;
  Expected e;
  const auto us = blocks(w, fn);
  double in_calls = 0;
  for (double d : us) in_calls += d;
  e.unsure = std::max(0.0, took(w, fn, in_calls) - in_calls);
  for (double d : us) {
    if (d >= min_us + kMargin && d <= max_us - kMargin)
      e.sure += d;
    else if (d >= min_us - kMargin && d <= max_us + kMargin)
      e.unsure += d;
  }
  return e;
}

// How many off-CPU periods the run says it could not count: switch-outs the
// kernel did not sample, switch-ins never reported, records lost (its
// WARNING lines). Each may be one whole block missing from a phase.
unsigned long uncounted(const std::string& err) {
  unsigned long n = 0;
  std::istringstream in(err);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("WARNING: ", 0) == 0 && (l.find("no sched_switch sample") != std::string::npos ||
                                         l.find("were not counted") != std::string::npos))
      n += std::stoul(l.substr(9));
  return n;
}

// The sum of the n longest blocks of a phase: what n uncounted periods can
// take out of its total.
double longest_blocks(const Workload& w, const std::string& fn, unsigned long n) {
  auto us = blocks(w, fn);
  std::sort(us.rbegin(), us.rend());
  double sum = 0;
  for (size_t i = 0; i < us.size() && i < n; ++i) sum += us[i];
  return sum;
}

// got is want within tol, or short of it by at most short_by more: a phase
// may lack the blocks the run said it could not count, never gain any.
::testing::AssertionResult near(double got, double want, double tol, double short_by) {
  if (got <= want + tol && got >= want - tol - short_by) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << got << " is not within " << tol << " of " << want
                                       << " (short by up to " << short_by
                                       << " more allowed: the blocks it said it missed)";
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

class OffcputimeRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on sched_switch";
  }

  // Runs offcputime with args while the offcpu workload does its phases once;
  // returns its output after SIGINT.
  // Without context-switch records (forced: scripts/check's fallback pass)
  // the switch-ins come from sched_switch, which this VM does not report
  // from an idle CPU: the CPUs are kept busy meanwhile (BusyCpus).
  static std::unique_ptr<BusyCpus> busy_without_switch_records() {
    return kernel::forced_off(kernel::Feature::kContextSwitch) ? std::make_unique<BusyCpus>()
                                                               : nullptr;
  }

  RunResult trace_workload(Workload& w, std::vector<std::string> args) {
    auto busy = busy_without_switch_records();
    args.insert(args.begin(), tool_path("offcputime"));
    Running t(args);
    EXPECT_TRUE(wait_for_tracing(t.pid(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), 20))
        << "offcputime never started tracing";
    w.go();
    EXPECT_TRUE(w.wait_line("done", 60)) << "workload did not finish";
    t.signal(SIGINT);
    return t.finish(60);
  }

  // Sum of folded lines whose frames include fn.
  static double total_with(const std::map<std::string, unsigned long>& folded,
                           const std::string& fn) {
    double us = 0;
    for (auto& [stack, n] : folded)
      if (contains(frames_of(stack), fn)) us += static_cast<double>(n);
    return us;
  }
};

TEST_F(OffcputimeRuntime, FoldedTotalsPerFunctionWithinTenPercent) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-f", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  const double sleep = took(w, "sleep_known", kSleepUs), poll = took(w, "poll_known", kPollUs),
               nap = took(w, "nap_short", kNapUs);
  const auto missed = uncounted(r.err);
  EXPECT_TRUE(near(total_with(folded, "sleep_known"), sleep, sleep * 0.10,
                   longest_blocks(w, "sleep_known", missed)))
      << r.out << r.err;
  EXPECT_TRUE(near(total_with(folded, "poll_known"), poll, poll * 0.10,
                   longest_blocks(w, "poll_known", missed)))
      << r.out << r.err;
  EXPECT_TRUE(near(total_with(folded, "nap_short"), nap, nap * 0.15,
                   longest_blocks(w, "nap_short", missed)))
      << r.out << r.err;
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    EXPECT_EQ(fr[0], "offcpu") << stack;
    if (contains(fr, "sleep_known")) {
      // user root..leaf then kernel root..leaf: main calls sleep_known, which
      // blocks in nanosleep; the kernel side ends in the scheduler.
      auto m = std::find(fr.begin(), fr.end(), "main");
      auto f = std::find(fr.begin(), fr.end(), "sleep_known");
      EXPECT_LT(m, f) << stack;
      // Blocked in nanosleep, unless preempted in sleep_known's own code on
      // a busy machine (an interrupt's return to user space rescheduled it):
      // off-CPU time too, and inside the measured call.
      bool preempted = std::any_of(fr.begin(), fr.end(), [](const std::string& x) {
        return x.rfind("irqentry_exit", 0) == 0 || x.rfind("exit_to_user_mode", 0) == 0 ||
               x.rfind("preempt_schedule", 0) == 0 || x.rfind("asm_sysvec_", 0) == 0;
      });
      if (!preempted) {
        EXPECT_TRUE(contains(fr, "do_nanosleep")) << stack;
      }
      EXPECT_EQ(fr.back(), "__schedule") << stack;
    }
  }
}

// System-wide, switch-ins come from sched_switch's next_pid, with perf's
// switch records only on the CPUs whose sched_switch misses switches (this
// VM's CPU 1 never shows a switch out of its idle task): the workload's
// totals on each CPU as exact as with -p.
TEST_F(OffcputimeRuntime, SystemWideTotalsOnEveryCpu) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    Workload w("offcpu");
    w.pin(cpu);
    auto r = trace_workload(w, {"-f"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto folded = parse_folded(r.out);
    const double sleep = took(w, "sleep_known", kSleepUs), poll = took(w, "poll_known", kPollUs),
                 nap = took(w, "nap_short", kNapUs);
    EXPECT_NEAR(total_with(folded, "sleep_known"), sleep, sleep * 0.10) << "CPU " << cpu;
    EXPECT_NEAR(total_with(folded, "poll_known"), poll, poll * 0.10) << "CPU " << cpu;
    EXPECT_NEAR(total_with(folded, "nap_short"), nap, nap * 0.15) << "CPU " << cpu;
  }
}

TEST_F(OffcputimeRuntime, MultilineRecordsCarryThreadAndSortedTotals) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            "Tracing off-CPU time (us) of PID " + w.pid_str() +
                " by user + kernel stack... Hit Ctrl-C to end.");
  auto recs = parse_multiline(r.out);
  ASSERT_FALSE(recs.empty()) << r.out;
  double sleep_us = 0;
  unsigned long prev = 0;
  for (auto& rec : recs) {
    EXPECT_EQ(rec.comm, "offcpu");
    EXPECT_EQ(rec.pid, w.pid());
    EXPECT_GE(rec.value, prev);
    prev = rec.value;
    if (contains(rec.frames, "sleep_known")) sleep_us += static_cast<double>(rec.value);
  }
  const double sleep = took(w, "sleep_known", kSleepUs);
  EXPECT_TRUE(near(sleep_us, sleep, sleep * 0.10,
                   longest_blocks(w, "sleep_known", uncounted(r.err))))
      << r.out << r.err;
}

TEST_F(OffcputimeRuntime, KernelStacksOnlyHaveNoUserFrames) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-K", "-f", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  for (auto& [stack, n] : folded) {
    auto fr = frames_of(stack);
    EXPECT_FALSE(contains(fr, "main") || contains(fr, "sleep_known")) << stack;
  }
  // nanosleep blocks: sleep_known + nap_short.
  const double both = took(w, "sleep_known", kSleepUs) + took(w, "nap_short", kNapUs);
  EXPECT_TRUE(near(total_with(folded, "do_nanosleep"), both, both * 0.10,
                   longest_blocks(w, "sleep_known", uncounted(r.err))))
      << r.out << r.err;
}

TEST_F(OffcputimeRuntime, UserStacksOnlyHaveNoKernelFrames) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-U", "-f", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  for (auto& [stack, n] : folded) EXPECT_FALSE(contains(frames_of(stack), "__schedule")) << stack;
  const double sleep = took(w, "sleep_known", kSleepUs);
  EXPECT_TRUE(near(total_with(folded, "sleep_known"), sleep, sleep * 0.10,
                   longest_blocks(w, "sleep_known", uncounted(r.err))))
      << r.out << r.err;
}

TEST_F(OffcputimeRuntime, DelimiterBetweenUserAndKernel) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-df", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long checked = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    if (!contains(fr, "sleep_known")) continue;
    auto dash = std::find(fr.begin(), fr.end(), "-");
    ASSERT_NE(dash, fr.end()) << stack;
    EXPECT_EQ(*(dash - 1), "sleep_known") << stack;
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

TEST_F(OffcputimeRuntime, MinBlockTimeDropsShortBlocks) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-m", "15000", "-f", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  for (const char* fn : {"sleep_known", "poll_known", "nap_short"}) {
    // nap_short's 2 ms naps count only if the machine made one 15 ms long.
    auto e = kept_blocks(w, fn, 15000, 1e12);
    EXPECT_TRUE(near(total_with(folded, fn), e.sure, e.sure * 0.10 + e.unsure + 1,
                     longest_blocks(w, fn, uncounted(r.err))))
        << fn << "\n"
        << r.out << r.err;
  }
}

TEST_F(OffcputimeRuntime, MaxBlockTimeDropsLongBlocks) {
  Workload w("offcpu");
  auto r = trace_workload(w, {"-M", "30000", "-f", "-p", w.pid_str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  for (const char* fn : {"sleep_known", "poll_known"}) {
    // poll_known's 50 ms polls never count; sleep_known's 20 ms sleeps do,
    // unless the machine made one 30 ms long.
    auto e = kept_blocks(w, fn, 0, 30000);
    EXPECT_TRUE(near(total_with(folded, fn), e.sure, e.sure * 0.10 + e.unsure + 1,
                     longest_blocks(w, fn, uncounted(r.err))))
        << fn << "\n"
        << r.out << r.err;
  }
}

// --state 1 and --state 0 at once on one run of the workload: the sleeps
// count as S; R holds only waits for a CPU (on a busy machine, the phases'
// preemptions, and a sleep whose timer fired before it reached schedule()
// waits runnable, with do_nanosleep on its stack). The sleeps in R would
// make the two add up to more than the phase's time.
TEST_F(OffcputimeRuntime, StateSelectsSleepsOrPreemption) {
  Workload w("offcpu");
  auto busy = busy_without_switch_records();
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  Running in_s_state({tool_path("offcputime"), "--state", "1", "-f", "-p", w.pid_str()});
  Running in_r_state({tool_path("offcputime"), "--state", "0", "-f", "-p", w.pid_str()});
  ASSERT_TRUE(wait_for_tracing(in_s_state.pid(), cpus, 20)) << "offcputime --state 1 never started";
  ASSERT_TRUE(wait_for_tracing(in_r_state.pid(), cpus, 20)) << "offcputime --state 0 never started";
  w.go();
  ASSERT_TRUE(w.wait_line("done", 60)) << "workload did not finish";
  in_s_state.signal(SIGINT);
  in_r_state.signal(SIGINT);
  auto sleeping = in_s_state.finish(60), runnable = in_r_state.finish(60);
  ASSERT_EQ(sleeping.exit_code, 0) << sleeping.err;
  ASSERT_EQ(runnable.exit_code, 0) << runnable.err;
  for (const char* fn : {"sleep_known", "poll_known"}) {
    const double phase = took(w, fn, 0);
    const double in_s = total_with(parse_folded(sleeping.out), fn);
    const double in_r = total_with(parse_folded(runnable.out), fn);
    EXPECT_TRUE(near(in_s, phase, phase * 0.10, longest_blocks(w, fn, uncounted(sleeping.err))))
        << fn << "\n"
        << sleeping.out << sleeping.err;
    EXPECT_LE(in_s + in_r, phase * 1.01 + 1000) << fn << "\n" << runnable.out;
  }

  // Two CPU burners sharing CPU 0 preempt each other: with --state 0 the
  // first is off-CPU (runnable, waiting) about half the time.
  Workload a("cpuratio", {"0", "burn_a"});
  Workload b("cpuratio", {"0", "burn_b"});
  a.pin(0);
  b.pin(0);
  auto r = run({tool_path("offcputime"), "--state", "0", "-f", "-p", a.pid_str(), "2"}, 30);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  double preempted = 0;
  for (auto& [stack, n] : parse_folded(r.out)) preempted += static_cast<double>(n);
  EXPECT_GT(preempted, 300000) << r.out;  // of 2 s; about 1 s expected
}

bool is_kernel_thread(long pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  for (int i = 0; i < 7 && rest >> field; ++i) {
  }
  return (std::stoul(field) & 0x00200000) != 0;
}

bool alive(long pid) { return kill(static_cast<pid_t>(pid), 0) == 0; }

TEST_F(OffcputimeRuntime, UserAndKernelThreadFilters) {
  Workload w("cpuratio");  // some user-space activity besides the kernel's
  auto users = run({tool_path("offcputime"), "-u", "2"}, 30);
  ASSERT_EQ(users.exit_code, 0) << users.err;
  unsigned long checked = 0;
  for (auto& rec : parse_multiline(users.out))
    if (alive(rec.pid)) {
      EXPECT_FALSE(is_kernel_thread(rec.pid)) << rec.comm << " " << rec.pid;
      ++checked;
    }
  EXPECT_GT(checked, 0u) << users.out;

  auto kernel = run({tool_path("offcputime"), "-k", "2"}, 30);
  ASSERT_EQ(kernel.exit_code, 0) << kernel.err;
  checked = 0;
  for (auto& rec : parse_multiline(kernel.out))
    if (alive(rec.pid)) {
      EXPECT_TRUE(is_kernel_thread(rec.pid)) << rec.comm << " " << rec.pid;
      ++checked;
    }
  EXPECT_GT(checked, 0u) << kernel.out;
}

// Issue 38 (as stackcount -p): a process that existed before offcputime
// started and exited before its samples were read had only "[unknown]" user
// frames (no MMAP2 records for what it mapped before). offcputime is
// stopped (SIGSTOP) while the workload runs and exits, so that every
// sample is read after the exit.
TEST_F(OffcputimeRuntime, ProcessThatExitsBeforeItsSamplesAreReadResolves) {
  std::optional<Workload> w(std::in_place, "offcpu");
  auto busy = busy_without_switch_records();
  Running t({tool_path("offcputime"), "-U", "-f", "-p", w->pid_str()});
  ASSERT_TRUE(wait_for_tracing(t.pid(), static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)), 20));
  t.signal(SIGSTOP);
  w->go();
  ASSERT_TRUE(w->wait_line("done", 60));
  w.reset();  // killed and reaped
  t.signal(SIGCONT);
  t.signal(SIGINT);
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folded = parse_folded(r.out);
  EXPECT_GT(total_with(folded, "sleep_known"), 0.0) << r.out;
  EXPECT_GT(total_with(folded, "poll_known"), 0.0) << r.out;
}

TEST_F(OffcputimeRuntime, StopSignalsStillPrintTheReport) {
  for (int sig : {SIGTERM, SIGHUP}) {
    auto busy = busy_without_switch_records();  // (see trace_workload)
    Workload w("offcpu");
    Running t({tool_path("offcputime"), "-p", w.pid_str()});
    ASSERT_TRUE(t.wait_for_stdout("Hit Ctrl-C to end.\n", 20));
    w.go();
    ASSERT_TRUE(w.wait_line("done", 60));
    t.signal(sig);
    auto r = t.finish(60);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_FALSE(parse_multiline(r.out).empty()) << "signal " << sig << "\n" << r.out;
  }
}

struct BadInput {
  std::vector<std::string> args;
  int exit_code;
  std::string message;
};

TEST_F(OffcputimeRuntime, BadInputIsRejectedClearly) {
  std::ifstream pid_max_file("/proc/sys/kernel/pid_max");
  long pid_max = 4194304;
  pid_max_file >> pid_max;
  const std::string missing = std::to_string(pid_max - 1);
  const BadInput cases[] = {
      {{"-p", missing, "1"}, 1, "no process with PID " + missing},
      {{"-t", missing, "1"}, 1, "no thread with TID " + missing},
      {{"-m", "20000", "-M", "10000"}, 2, "MIN_US"},
      {{"--state", "abc"}, 2, "invalid state 'abc'"},
      {{"-p", "1", "-t", "1"}, 2, "cannot be combined"},
      {{"-u", "-k"}, 2, "cannot be combined"},
      {{"-U", "-K"}, 2, "-U and -K"},
      {{"-p", "notapid"}, 2, "notapid"},
  };
  for (const auto& c : cases) {
    auto r = run([&] {
      std::vector<std::string> a{tool_path("offcputime")};
      a.insert(a.end(), c.args.begin(), c.args.end());
      return a;
    }());
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.exit_code, c.exit_code) << first;
    EXPECT_NE(first.find(c.message), std::string::npos) << first;
    EXPECT_EQ(first.rfind("offcputime: ", 0), 0u) << first;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// -o: the folded file is the folded output of the same run.
TEST_F(OffcputimeRuntime, OutputFileHoldsTheSameReport) {
  Workload w("offcpu");
  TempDir dir;
  auto r = trace_workload(w, {"-f", "-p", w.pid_str(), "-o", dir / "o.folded"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(parse_folded(r.out).empty()) << r.out;
  EXPECT_EQ(slurp(dir / "o.folded"), r.out);
  EXPECT_EQ(dir.names(), (std::vector<std::string>{"o.folded"}));
}

}  // namespace
}  // namespace tracekit::testing
