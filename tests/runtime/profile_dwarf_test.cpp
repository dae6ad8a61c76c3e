// profile --call-graph dwarf against a workload built without frame
// pointers (tests/workloads/nofp.c, -O2 -fomit-frame-pointer).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

class ProfileDwarfRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on all CPUs";
  }
  RunResult profile(std::vector<std::string> args) {
    args.insert(args.begin(), tool_path("profile"));
    return run(args, 60);
  }
};

// nofp's chain, root first.
const std::vector<std::string> kChain = {"main",   "nofp_1", "nofp_2",   "nofp_3",
                                         "nofp_4", "nofp_5", "nofp_leaf"};

// Whether frames (root first) hold the whole chain, in order, one call
// after the other.
bool whole_chain(const std::vector<std::string>& frames) {
  auto it = std::search(frames.begin(), frames.end(), kChain.begin(), kChain.end());
  return it != frames.end();
}

struct Share {
  unsigned long whole = 0, all = 0;
};

Share chain_share(const std::string& folded) {
  Share s;
  for (auto& [stack, n] : parse_folded(folded)) {
    s.all += n;
    if (whole_chain(frames_of(stack))) s.whole += n;
  }
  return s;
}

TEST_F(ProfileDwarfRuntime, DwarfFindsTheWholeChainWhereFramePointersDoNot) {
  Workload w("nofp");
  auto dwarf = profile({"--call-graph", "dwarf", "-U", "-F", "199", "-f", "-p", w.pid_str(), "3"});
  ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err;
  auto d = chain_share(dwarf.out);
  ASSERT_GT(d.all, 100u) << dwarf.out;
  EXPECT_GE(d.whole * 10, d.all * 9) << dwarf.out;  // at least 90%
  // The stack is shallow: every frame is known, the first sample's too
  // (unwound while its modules were being reported).
  EXPECT_EQ(dwarf.out.find("[unknown]"), std::string::npos) << dwarf.out;
  // The control: a frame-pointer walk loses the chain.
  auto fp = profile({"--call-graph", "fp", "-U", "-F", "199", "-f", "-p", w.pid_str(), "3"});
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  auto f = chain_share(fp.out);
  ASSERT_GT(f.all, 100u) << fp.out;
  EXPECT_LT(f.whole * 10, f.all * 9) << fp.out;
  // Without the option: the same as fp.
  auto plain = profile({"-U", "-F", "199", "-f", "-p", w.pid_str(), "1"});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  auto p = chain_share(plain.out);
  EXPECT_LT(p.whole * 10, p.all * 9) << plain.out;
}

const std::string kTruncatedHint =
    "user stacks look truncated (code built without frame pointers?); try --call-graph dwarf\n";

// fp mode on code without frame pointers: the hint, once. On frame-pointer
// code, or in dwarf mode, or with -K: none.
TEST_F(ProfileDwarfRuntime, TruncatedUserStacksHintOnlyWhereTheyAre) {
  Workload w("nofp");
  auto fp = profile({"-U", "-F", "199", "-f", "-p", w.pid_str(), "1"});
  ASSERT_EQ(fp.exit_code, 0) << fp.err;
  EXPECT_EQ(fp.err, kTruncatedHint);
  auto both = profile({"-F", "199", "-f", "-p", w.pid_str(), "1"});
  ASSERT_EQ(both.exit_code, 0) << both.err;
  EXPECT_EQ(both.err, kTruncatedHint);
  auto dwarf = profile({"--call-graph", "dwarf", "-U", "-F", "199", "-f", "-p", w.pid_str(), "1"});
  ASSERT_EQ(dwarf.exit_code, 0) << dwarf.err;
  EXPECT_EQ(dwarf.err, "");
  EXPECT_FALSE(dwarf.out.empty());
  auto kernel = profile({"-K", "-F", "199", "-f", "-p", w.pid_str(), "1"});
  ASSERT_EQ(kernel.exit_code, 0) << kernel.err;
  EXPECT_EQ(kernel.err.find("user stacks look truncated"), std::string::npos) << kernel.err;

  Workload fpw("cpuratio");
  auto f = profile({"-U", "-F", "199", "-f", "-p", fpw.pid_str(), "1"});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_GT(parse_folded(f.out).size(), 0u);
  EXPECT_EQ(f.err, "");
}

TEST_F(ProfileDwarfRuntime, KernelAndUserSidesTogether) {
  Workload w("nofp");
  auto r = profile({"--call-graph", "dwarf", "-d", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = chain_share(r.out);
  ASSERT_GT(s.all, 50u) << r.out;
  EXPECT_GE(s.whole * 10, s.all * 9) << r.out;
}

// A stack deeper than the copy (SIZE) is cut where the copy ends: what was
// unwound is the leaf end of the chain, in order, then [unknown]; never
// other functions; and the cut stacks are counted.
TEST_F(ProfileDwarfRuntime, AStackDeeperThanSizeIsCutNotMisattributed) {
  Workload w("nofp");
  auto r = profile({"--call-graph", "dwarf,64", "-U", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("user stacks were cut at 64 bytes (--call-graph dwarf,64)"),
            std::string::npos)
      << r.err;
  unsigned long all = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    ASSERT_GE(fr.size(), 3u) << stack;
    all += n;
    EXPECT_EQ(fr[0], "nofp") << stack;
    EXPECT_EQ(fr[1], "[unknown]") << stack;
    // The rest: a tail of the chain (the leaf's callers up to the cut), or
    // one of them plus what the leaf called (its clock read).
    std::vector<std::string> rest(fr.begin() + 2, fr.end());
    auto leaf = std::find(rest.begin(), rest.end(), "nofp_leaf");
    ASSERT_NE(leaf, rest.end()) << stack;
    std::vector<std::string> callers(rest.begin(), leaf + 1);
    EXPECT_TRUE(std::equal(callers.rbegin(), callers.rend(), kChain.rbegin())) << stack;
    EXPECT_LT(callers.size(), kChain.size()) << stack;
  }
  EXPECT_GT(all, 50u) << r.out;
}

// A handler running on top of a signal frame: the chain goes on through
// libc's restorer (looked up at its own address: a return address would
// name the code before it) into the function the signal interrupted.
TEST_F(ProfileDwarfRuntime, SignalFramesUnwindIntoTheInterruptedFunction) {
  Workload w("nofp", {"0", "signal"});
  auto r = profile({"--call-graph", "dwarf", "-U", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> chain = kChain;
  for (const char* f : {"__restore_rt", "nofp_handler", "nofp_sig_1", "nofp_sig_2", "nofp_sig_leaf"})
    chain.push_back(f);
  unsigned long in_handler = 0, whole = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    if (std::find(fr.begin(), fr.end(), "nofp_sig_leaf") == fr.end()) continue;
    in_handler += n;
    if (std::search(fr.begin(), fr.end(), chain.begin(), chain.end()) != fr.end() &&
        std::find(fr.begin(), fr.end(), "[unknown]") == fr.end())
      whole += n;
  }
  ASSERT_GT(in_handler, 100u) << r.out;
  EXPECT_GE(whole * 10, in_handler * 9) << r.out;  // at least 90%
}

// The vDSO: its frames unwind with its own CFI (read from tracekit's own
// vDSO, the same image) into the caller's. A sample is in the vDSO when its
// leaf is a __vdso_ function, or code below one that no symbol names: on a
// host whose clock is kvm-clock, most of the time goes to the vDSO's static
// pvclock reader, which has CFI but no symbol ("[unknown]" as the leaf,
// under __vdso_clock_gettime). Nothing else but the leaf may be unknown.
TEST_F(ProfileDwarfRuntime, TheVdsoUnwindsIntoItsCaller) {
  Workload w("nofp", {"0", "clock"});
  auto r = profile({"--call-graph", "dwarf", "-U", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long in_vdso = 0, whole = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    auto named_leaf = fr.end();  // the __vdso_ function the sample is in
    if (!fr.empty() && fr.back().starts_with("__vdso_")) {
      named_leaf = fr.end() - 1;
    } else if (fr.size() >= 2 && fr.back() == "[unknown]" &&
               fr[fr.size() - 2].starts_with("__vdso_")) {
      named_leaf = fr.end() - 2;
    }
    if (named_leaf == fr.end()) continue;
    in_vdso += n;
    if (whole_chain(fr) && std::find(fr.begin(), named_leaf, "[unknown]") == named_leaf) whole += n;
  }
  ASSERT_GT(in_vdso, 50u) << r.out;
  EXPECT_GE(whole * 10, in_vdso * 9) << r.out;  // at least 90%
}

// JIT code (named by /tmp/perf-PID.map) has no CFI: the unwind stops
// there, saying so with [unknown], and never loops.
TEST_F(ProfileDwarfRuntime, JitCodeEndsTheUnwindWithUnknown) {
  Workload w("nofp", {"0", "jit"});
  const std::string map = "/tmp/perf-" + w.pid_str() + ".map";
  auto r = profile({"--call-graph", "dwarf", "-U", "-F", "199", "-f", "-p", w.pid_str(), "2"});
  unlink(map.c_str());  // the workload is killed: it cannot
  ASSERT_EQ(r.exit_code, 0) << r.err;
  unsigned long in_jit = 0, stopped = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto fr = frames_of(stack);
    if (fr.empty() || fr.back() != "nofp_jit_loop") continue;
    in_jit += n;
    if (fr == std::vector<std::string>{"nofp", "[unknown]", "nofp_jit_loop"}) stopped += n;
  }
  ASSERT_GT(in_jit, 100u) << r.out;
  EXPECT_GE(stopped * 10, in_jit * 9) << r.out;  // at least 90%
}

// From main down to nofp_leaf, root first, joined by ";" ("" when frames
// hold no such run): the part of a stack both tools name alike (perf names
// libc's start frames its own way, and shows kernel frames).
std::string main_to_leaf(const std::vector<std::string>& frames) {
  auto m = std::find(frames.begin(), frames.end(), "main");
  auto l = std::find(m, frames.end(), "nofp_leaf");
  if (m == frames.end() || l == frames.end()) return "";
  std::string s;
  for (auto it = m; it != l + 1; ++it) s += (s.empty() ? "" : ";") + *it;
  return s;
}

// perf record --call-graph dwarf + perf script, on the same workload at the
// same rate: the same chains. Each side samples in 2 s rounds until it has
// more than 100 samples (a minute at most): the samples come with the
// workload's CPU time, which on a loaded machine is a fraction of the wall
// time (two CPU hogs and the other users' builds: nofp ran 0.5 s of 2, and
// perf took 49 samples in a round).
TEST_F(ProfileDwarfRuntime, AgreesWithPerfDwarfOnTheChains) {
  if (access("/usr/bin/perf", X_OK) != 0) GTEST_SKIP() << "linux-perf not installed";
  constexpr unsigned long kEnough = 100;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  Workload w("nofp");
  TempDir dir;
  const std::string data = dir / "perf.data";
  std::map<std::string, unsigned long> theirs;
  unsigned long their_all = 0;
  std::string their_text;
  while (their_all <= kEnough && std::chrono::steady_clock::now() < deadline) {
    auto rec = run({"/usr/bin/perf", "record", "-q", "--call-graph", "dwarf", "-F", "199", "-o",
                    data, "-p", w.pid_str(), "--", "sleep", "2"},
                   60);
    ASSERT_EQ(rec.exit_code, 0) << rec.err;
    auto script = run({"/usr/bin/perf", "script", "-i", data, "-F", "ip,sym"}, 60);
    ASSERT_EQ(script.exit_code, 0) << script.err;
    if (their_text.size() < 2000) their_text += script.out.substr(0, 2000);
    // perf script -F ip,sym: each sample's stack, leaf first, one frame a
    // line ("ADDR SYM"), samples separated by blank lines.
    std::vector<std::string> sample;
    auto close = [&] {
      if (sample.empty()) return;
      std::reverse(sample.begin(), sample.end());
      ++theirs[main_to_leaf(sample)];
      ++their_all;
      sample.clear();
    };
    std::istringstream in(script.out);
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream ls(line);
      std::string addr, sym;
      if (!(ls >> addr >> sym)) {
        close();
        continue;
      }
      sample.push_back(sym);
    }
    close();
  }
  ASSERT_GT(their_all, kEnough) << their_text.substr(0, 2000);

  std::map<std::string, unsigned long> mine;
  unsigned long my_all = 0;
  std::string my_text;
  while (my_all <= kEnough && std::chrono::steady_clock::now() < deadline) {
    auto ours = profile({"--call-graph", "dwarf", "-F", "199", "-f", "-p", w.pid_str(), "2"});
    ASSERT_EQ(ours.exit_code, 0) << ours.err;
    my_text += ours.out;
    for (auto& [stack, n] : parse_folded(ours.out)) {
      mine[main_to_leaf(frames_of(stack))] += n;
      my_all += n;
    }
  }
  ASSERT_GT(my_all, kEnough) << my_text;
  const std::string chain = "main;nofp_1;nofp_2;nofp_3;nofp_4;nofp_5;nofp_leaf";
  EXPECT_GE(theirs[chain] * 10, their_all * 9) << their_text.substr(0, 2000);
  EXPECT_GE(mine[chain] * 10, my_all * 9) << my_text;
  // Every chain one of them found, the other found too (the rare ones
  // aside: a handful of samples).
  for (auto& [c, n] : mine) EXPECT_TRUE(n * 20 <= my_all || theirs[c] > 0) << c;
  for (auto& [c, n] : theirs) EXPECT_TRUE(n * 20 <= their_all || mine[c] > 0) << c;
}

TEST_F(ProfileDwarfRuntime, BadCallGraphsAreRejected) {
  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string message;
  };
  const Case cases[] = {
      {{"--call-graph", "lbr", "1"}, 2, "invalid --call-graph 'lbr'"},
      {{"--call-graph", "dwarf,0", "1"}, 2, "invalid --call-graph stack size '0'"},
      {{"--call-graph", "dwarf,65536", "1"}, 2, "stack size '65536'"},
      {{"--call-graph", "dwarf", "-K", "1"}, 2, "cannot be combined with -K"},
  };
  for (const auto& c : cases) {
    auto r = profile(c.args);
    std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.exit_code, c.exit_code) << first;
    EXPECT_NE(first.find(c.message), std::string::npos) << first;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(ProfileDwarfRuntime, WithoutTheKernelFeatureDwarfFailsClearly) {
  auto r = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-user_stack", tool_path("profile"),
                "--call-graph", "dwarf", "1"},
               30);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("profile: perf user register and stack samples (PERF_SAMPLE_REGS_USER, "
                       "PERF_SAMPLE_STACK_USER) turned off by TRACEKIT_KERNEL_FEATURES"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("user_stack"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  // fp needs no such feature.
  auto fp = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-user_stack", tool_path("profile"),
                 "--call-graph", "fp", "-f", "1"},
                30);
  EXPECT_EQ(fp.exit_code, 0) << fp.err;
}

}  // namespace
}  // namespace tracekit::testing
