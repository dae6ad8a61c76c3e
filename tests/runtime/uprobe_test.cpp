// uprobe against the calls workload (tests/workloads/calls.c): work_unit(i,
// 3) called for i = 0 .. N-1, returning 3i + 1. Exact counts, the decoded
// argument and return values (their sums are known), user stacks (-s), -l,
// -v, and the same events through perf-tools' uprobe.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"
#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::testing {
namespace {

constexpr long kCalls = 401;  // a prime

// The sum of the values of "name=VALUE" over lines holding marker, and how
// many lines held it.
std::pair<long, long> sum_of(const std::string& out, const std::string& marker,
                             const std::string& name) {
  long sum = 0, n = 0;
  for (const auto& l : lines_of(out)) {
    if (l.find(marker) == std::string::npos) continue;
    ++n;
    auto at = l.find(" " + name + "=");
    if (at == std::string::npos) continue;
    sum += std::stol(l.substr(at + name.size() + 2), nullptr, 0);
  }
  return {sum, n};
}

class UprobeRuntime : public TracingTest {
 protected:
  // Runs uprobe with args ("WL" replaced by the workload's path, "PID" by
  // its pid) while the calls workload makes n calls.
  RunResult trace_calls(std::vector<std::string> args, long n = kCalls) {
    Workload w("calls", {std::to_string(n)});
    for (auto& a : args) {
      if (a == "PID") a = w.pid_str();
      auto at = a.find("WL");
      if (at != std::string::npos) a.replace(at, 2, workload_path("calls"));
    }
    args.insert(args.begin(), tool_path("uprobe"));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout("Ctrl-C to end.\n", 60)) << "no header";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    t.signal(SIGINT);
    return t.finish(60);
  }
};

TEST_F(UprobeRuntime, EntryCountAndArguments) {
  auto r = trace_calls({"-p", "PID", "p:WL:work_unit i=%di:s64 k=%si:s64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto [i_sum, n] = sum_of(r.out, " work_unit: (0x", "i");
  EXPECT_EQ(n, kCalls) << r.out.substr(0, 2000);
  EXPECT_EQ(i_sum, kCalls * (kCalls - 1) / 2);
  auto [k_sum, m] = sum_of(r.out, " work_unit: (0x", "k");
  EXPECT_EQ(k_sum, 3 * kCalls);
  EXPECT_NE(lines_of(r.out)[0].find("Tracing uprobe work_unit (p:work_unit "), std::string::npos)
      << lines_of(r.out)[0];
}

TEST_F(UprobeRuntime, ReturnValues) {
  auto r = trace_calls({"-p", "PID", "r:WL:work_unit ret=$retval:s64"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto [sum, n] = sum_of(r.out, " work_unit: (0x", "ret");
  EXPECT_EQ(n, kCalls) << r.out.substr(0, 2000);
  EXPECT_EQ(sum, 3 * kCalls * (kCalls - 1) / 2 + kCalls);
  // A return probe shows where it returned to and from.
  EXPECT_NE(r.out.find(" <- 0x"), std::string::npos) << r.out.substr(0, 1000);
}

TEST_F(UprobeRuntime, AliasFilterAndBufferedMode) {
  Workload w("calls", {std::to_string(kCalls)});
  Running t({tool_path("uprobe"), "-d", "3", "-p", w.pid_str(),
             "p:myprobe " + workload_path("calls") + ":work_unit i=%di:s64", "i < 100"});
  ASSERT_TRUE(t.wait_for_stdout("(buffered)...\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  auto r = t.finish(60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing uprobe myprobe for 3 seconds (buffered)...");
  auto [sum, n] = sum_of(r.out, " myprobe: (0x", "i");
  EXPECT_EQ(n, 100);
  EXPECT_EQ(sum, 99 * 100 / 2);
}

// -s: every event is followed by its user stack, whose first frame is the
// probed address (the event's own "(0x...)"), resolved to work_unit; live
// and buffered (read after the run, the process's mappings taken at start).
TEST_F(UprobeRuntime, UserStacks) {
  auto check = [](const std::string& out, long n) {
    auto lines = lines_of(out);
    long stacks = 0;
    for (size_t i = 0; i + 2 < lines.size(); ++i) {
      auto at = lines[i].find(" work_unit: (0x");
      if (at == std::string::npos) continue;
      std::string addr = lines[i].substr(at + 15, lines[i].find(')', at) - at - 15);
      EXPECT_NE(lines[i + 1].find(": <user stack trace>"), std::string::npos) << lines[i + 1];
      std::string want = " => work_unit <" + std::string(16 - addr.size(), '0') + addr + ">";
      EXPECT_EQ(lines[i + 2], want);
      stacks += lines[i + 1].find(": <user stack trace>") != std::string::npos;
    }
    EXPECT_EQ(stacks, n) << out.substr(0, 2000);
  };
  auto live = trace_calls({"-s", "-p", "PID", "p:WL:work_unit"});
  ASSERT_EQ(live.exit_code, 0) << live.err;
  check(live.out, kCalls);

  Workload w("calls", {"53"});
  Running t({tool_path("uprobe"), "-s", "-d", "3", "-p", w.pid_str(),
             "p:" + workload_path("calls") + ":work_unit"});
  ASSERT_TRUE(t.wait_for_stdout("(buffered)...\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  auto buffered = t.finish(60);
  ASSERT_EQ(buffered.exit_code, 0) << buffered.err;
  check(buffered.out, 53);
}

// The caller of an entry probe (-s): twocallers_u's main calls f N times,
// its g M times. At f's first instruction the kernel's frame-pointer walk
// goes from f to the caller's caller; the return address at the stack
// pointer, read by a fetch argument the tool adds, is the second frame:
// main N times, g M times. The event line is the kernel's without it.
constexpr long kMainCalls = 409, kGCalls = 211;  // primes

class UprobeCallerRuntime : public UprobeRuntime {
 protected:
  struct Traced {
    RunResult r;
    std::vector<std::string> probes;  // the tool's uprobe_events lines, while it ran
  };
  // uprobe ARGS -p PID DEFINITION ("WL" in it: the workload's path).
  Traced trace_f(std::vector<std::string> args, std::string definition) {
    Workload w("twocallers_u", {std::to_string(kMainCalls), std::to_string(kGCalls)});
    auto at = definition.find("WL");
    if (at != std::string::npos) definition.replace(at, 2, workload_path("twocallers_u"));
    args.insert(args.begin(), tool_path("uprobe"));
    args.insert(args.end(), {"-p", w.pid_str(), definition});
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout("Ctrl-C to end.\n", 60)) << "no header";
    Traced out;
    const std::string group = "tracekit_" + std::to_string(t.pid()) + "/";
    auto dir = tracefs::tracing_dir();
    for (const auto& l : lines_of(slurp((dir ? *dir : "") + "/uprobe_events")))
      if (l.find(group) != std::string::npos) out.probes.push_back(l);
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    t.signal(SIGINT);
    out.r = t.finish(60);
    // The fallback pass's note (set_event_pid and event-fork forced off)
    // is not what these tests are about.
    std::string err;
    for (const auto& l : lines_of(out.r.err))
      if (l.find("cannot follow forks") == std::string::npos) err += l + "\n";
    out.r.err = err;
    return out;
  }
  // How many stacks have each function as the frame after the probed one
  // (events named event; "" for stacks of one frame).
  static std::map<std::string, long> second_frames(const std::string& out,
                                                   const std::string& event) {
    std::map<std::string, long> n;
    auto lines = lines_of(out);
    for (size_t i = 0; i + 2 < lines.size(); ++i) {
      if (lines[i].find(" " + event + ": (0x") == std::string::npos) continue;
      // The kernel's line: nothing after the address (no fetch argument).
      EXPECT_EQ(lines[i].back(), ')') << lines[i];
      EXPECT_NE(lines[i + 1].find(": <user stack trace>"), std::string::npos) << lines[i + 1];
      EXPECT_EQ(lines[i + 2].rfind(" => f <", 0), 0u) << lines[i + 2];
      std::string second;
      if (i + 3 < lines.size() && lines[i + 3].rfind(" => ", 0) == 0)
        second = lines[i + 3].substr(4, lines[i + 3].find(" <") - 4);
      ++n[second];
    }
    return n;
  }
};

TEST_F(UprobeCallerRuntime, EntryProbeShowsTheCaller) {
  if (!kernel::Features::host().has(kernel::Feature::kUprobeFetchArgs))
    GTEST_SKIP() << "no fetch arguments on uprobes (UprobeCallerRuntime.WithoutFetchArgs)";
  // By symbol and by the symbol's address.
  std::string f_address;
  auto syms = probe::elf_symbols(workload_path("twocallers_u"));
  ASSERT_TRUE(syms) << syms.error().str();
  for (const auto& fn : syms->functions)
    if (fn.name == "f") {
      char a[32];
      std::snprintf(a, sizeof a, "0x%llx", static_cast<unsigned long long>(fn.address));
      f_address = a;
    }
  ASSERT_FALSE(f_address.empty());
  for (const auto& [definition, event] :
       std::vector<std::pair<std::string, std::string>>{
           {"p:WL:f", "f"}, {"p:WL:" + f_address, "twocallers_u_" + f_address}}) {
    auto t = trace_f({"-s"}, definition);
    ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
    EXPECT_EQ(t.r.err, "");
    EXPECT_EQ(second_frames(t.r.out, event),
              (std::map<std::string, long>{{"main", kMainCalls}, {"g", kGCalls}}))
        << definition << "\n" << t.r.out.substr(0, 3000);
    ASSERT_EQ(t.probes.size(), 1u);
    EXPECT_NE(t.probes[0].find(" __tracekit_caller=+0(%sp):x64"), std::string::npos) << t.probes[0];
    // The header shows the definition as given.
    EXPECT_EQ(lines_of(t.r.out)[0].find("__tracekit_caller"), std::string::npos);
  }
  // With fetch arguments of the user's: theirs printed, ours not.
  auto t = trace_f({"-s"}, "p:WL:f i=%di:s64");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  auto [sum, n] = sum_of(t.r.out, " f: (0x", "i");
  EXPECT_EQ(n, kMainCalls + kGCalls);
  EXPECT_EQ(sum, kMainCalls * (kMainCalls - 1) / 2 + kGCalls * (kGCalls - 1) / 2);
  EXPECT_EQ(t.r.out.find("__tracekit_caller"), std::string::npos);
  auto lines = lines_of(t.r.out);
  long main_seconds = 0;
  for (size_t i = 0; i + 3 < lines.size(); ++i)
    main_seconds += lines[i].find(" f: (0x") != std::string::npos &&
                    lines[i + 3].rfind(" => main <", 0) == 0;
  EXPECT_EQ(main_seconds, kMainCalls);
}

// Only at a function's entry with -s: not for return probes, not past the
// first instruction, not without -s.
TEST_F(UprobeCallerRuntime, OnlyWhereNeeded) {
  for (const auto& [args, definition] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-s"}, "r:WL:f"}, {{"-s"}, "p:WL:f+1"}, {{}, "p:WL:f"}}) {
    auto t = trace_f(args, definition);
    ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
    ASSERT_EQ(t.probes.size(), 1u) << definition;
    EXPECT_EQ(t.probes[0].find("__tracekit_caller"), std::string::npos) << t.probes[0];
    EXPECT_EQ(t.r.err, "") << definition;
  }
}

// Without the feature (forced off): today's stacks, and one line saying why.
TEST_F(UprobeCallerRuntime, WithoutFetchArgs) {
  ForcedFeatures forced("-uprobe_fetchargs");
  auto t = trace_f({"-s"}, "p:WL:f");
  ASSERT_EQ(t.r.exit_code, 0) << t.r.err;
  EXPECT_EQ(t.r.err,
            "uprobe: user stacks miss the caller of f (their second frame): fetch arguments on "
            "uprobes turned off by TRACEKIT_KERNEL_FEATURES (unset it to use uprobe_fetchargs)\n");
  ASSERT_EQ(t.probes.size(), 1u);
  EXPECT_EQ(t.probes[0].find("__tracekit_caller"), std::string::npos) << t.probes[0];
  // g's calls show main (g's caller, from g's frame); main's show main's
  // caller, in the C library; g never.
  auto seconds = second_frames(t.r.out, "f");
  EXPECT_EQ(seconds["main"], kGCalls);
  EXPECT_EQ(seconds.count("g"), 0u);
  long total = 0;
  for (const auto& [frame, n] : seconds) total += n;
  EXPECT_EQ(total, kMainCalls + kGCalls);
}

TEST_F(UprobeRuntime, ListAndView) {
  auto l = run({tool_path("uprobe"), "-l", workload_path("calls")});
  ASSERT_EQ(l.exit_code, 0) << l.err;
  EXPECT_NE(l.out.find("\nwork_unit\n"), std::string::npos) << l.out;
  auto v = run({tool_path("uprobe"), "-v", "p:" + workload_path("calls") + ":work_unit i=%di:s64"});
  ASSERT_EQ(v.exit_code, 0) << v.err;
  EXPECT_EQ(v.out.rfind("name: work_unit\n", 0), 0u) << v.out;
  EXPECT_NE(v.out.find("field:s64 i;"), std::string::npos) << v.out;
}

// perf-tools' own uprobe on the same function of the same process, at the
// same time as ours, entry and return: the same number of events and the
// same text after the event name (perf-tools finds the offset with objdump,
// we with libelf; its text is the kernel's).
TEST_F(UprobeRuntime, SameEventsAsPerfToolsUprobe) {
  if (kernel::forced_off(kernel::Feature::kInstances))
    GTEST_SKIP() << "without instances ours traces at the top level too, where perf-tools' lock "
                    "admits one of the two at a time (TopLevelRuntime tests that lock)";
  PerfToolsPeer peer("uprobe");
  if (!peer.usable()) GTEST_SKIP() << peer.why_not();
  // An absolute path: perf-tools writes the definition from the tracing
  // directory, where a relative one would not resolve.
  const std::string path = std::filesystem::absolute(workload_path("calls")).string();
  for (const std::string probe : {"p", "r"}) {
    const std::string where = path + ":work_unit " + (probe == "p" ? "i=%di:s64" : "ret=$retval:s64");
    const std::string field = probe == "p" ? "i" : "ret";
    Workload w("calls", {"101"});
    // Ours under another name: perf-tools removes its probe by the bare
    // event name ("-:work_unit"), which the kernel may take for ours
    // (EBUSY), and its own probe would be left behind.
    auto [mine, theirs] = trace_with_peer(
        peer, {tool_path("uprobe"), "-p", w.pid_str(), probe + ":tk_work_unit " + where},
        {"-p", w.pid_str(), probe + ":" + where}, w);
    ASSERT_EQ(mine.exit_code, 0) << mine.err;
    ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
    auto texts = [](const std::string& out) {
      std::map<std::string, int> m;
      for (const auto& l : lines_of(out)) {
        auto at = l.find("work_unit: (0x");
        if (at != std::string::npos) ++m[l.substr(at + 11)];
      }
      return m;
    };
    EXPECT_EQ(sum_of(theirs.out, " work_unit: (0x", field).second, 101) << theirs.out.substr(0, 2000);
    EXPECT_EQ(sum_of(mine.out, " tk_work_unit: (0x", field).second, 101) << mine.out.substr(0, 2000);
    EXPECT_EQ(texts(mine.out), texts(theirs.out)) << probe;
    std::cout << "ours:   " << lines_of(mine.out)[1] << "\ntheirs: " << lines_of(theirs.out)[1]
              << "\n";
  }
}

TEST_F(UprobeRuntime, BadInputIsRefusedAndLeavesNothing) {
  const std::string wl = workload_path("calls");
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const Case cases[] = {
      {{"p:" + wl + ":no_such_function"}, 1, "no function no_such_function in"},
      {{"p:no_such_program_zz:main"}, 1, "cannot find library or program \"no_such_program_zz\""},
      {{"p:" + wl + ":work_unit i=%nosuchreg"}, 1, "uprobe: "},
      {{"p:" + wl + ":work_unit", "no_such_field == 1"}, 1, "no_such_field"},
      {{"-p", "4194000", "p:" + wl + ":work_unit"}, 1, "no process with PID 4194000"},
      {{"work_unit"}, 2, "should start with p: or r:"},
      {{"-l", wl, "p:" + wl + ":work_unit"}, 2, "-l takes a target only"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> argv{tool_path("uprobe")};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    auto r = run(argv, 60);
    EXPECT_EQ(r.exit_code, c.code) << c.args.back() << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args.back() << "\n" << r.err;
    EXPECT_EQ(tracefs_snapshot(), before_) << c.args.back();
  }
}

// A fetched string (the file name open() is given) and the comm column hold
// what a user chose (tests/workloads/hostile.c: a newline and ESC in each):
// each control character prints as '?', the event is one line.
TEST_F(UprobeRuntime, ControlCharactersCannotForgeLines) {
  auto h = run_against_hostile(
      {tool_path("uprobe"), "-p", "PID", "p:libc:open file=+0(%di):string"}, "Ctrl-C to end.\n");
  ASSERT_TRUE(h.done);
  ASSERT_EQ(h.r.exit_code, 0) << h.r.err;
  EXPECT_EQ(terminal_controls(h.r.out), "");
  const std::string pid = std::to_string(h.pid);
  const std::string file = "file=\"/tmp/tracekit-hostile." + pid + "?/etc/shadow\"";
  long opens = 0;
  for (const auto& l : lines_of(h.r.out)) {
    EXPECT_NE(l.rfind("/etc/shadow", 0), 0u) << "a forged line: " << l;
    if (l.find(file) == std::string::npos) continue;
    ++opens;
    EXPECT_EQ(l.rfind("       ev?[2J?il-" + pid + " ", 0), 0u) << l;
    EXPECT_EQ(l.substr(l.size() - file.size()), file) << l;
  }
  EXPECT_EQ(opens, 1) << h.r.out.substr(0, 3000);
}

}  // namespace
}  // namespace tracekit::testing
