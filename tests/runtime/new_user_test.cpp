// What a new user meets (issue 8): patterns that used to hang or crash the
// matcher, a CPU the machine does not have, a stripped binary, and a run
// without root. Each case checks the exact message and exit code, and that
// tracefs is left as it was: nothing of the runs started here remains
// (tracefs_objects with their PIDs; other engineers' runs on this machine
// create and sweep their own objects meanwhile).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "harness.hpp"
#include "perf/event.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::testing {
namespace {

constexpr const char* kSetpriv = "/usr/bin/setpriv";
constexpr const char* kStrip = "/usr/bin/strip";

class NewUserRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs and perf_event_open";
    auto dir = tracefs::tracing_dir();
    ASSERT_TRUE(dir.ok()) << dir.error().str();
    tracing_ = *dir;
    before_ = tracefs_objects(tracing_, {});
  }
  void TearDown() override {
    if (!tracing_.empty()) {
      EXPECT_EQ(tracefs_objects(tracing_, ours_), before_) << "tracefs was left changed";
    }
  }
  // run(), remembering the PID so that TearDown looks for what it left.
  RunResult run_tool(const std::vector<std::string>& argv, double timeout_s = 30) {
    Running r(argv);
    ours_.insert(r.pid());
    return r.finish(timeout_s);
  }
  static std::vector<std::string> tool(const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), tool_path(name));
    return args;
  }
  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }
  std::string tracing_;
  std::set<int> ours_;
  std::vector<std::string> before_;
};

// Row 6: std::regex took minutes over the kernel's names and ignored
// Ctrl-C meanwhile; the search is linear now.
TEST_F(NewUserRuntime, NestedQuantifierRegexEndsQuickly) {
  for (const char* spec : {"(.*)*zzz", "t:.*:(.*)*zzz", "c:(.*)*zzz"}) {
    SCOPED_TRACE(spec);
    auto start = std::chrono::steady_clock::now();
    auto r = run_tool(tool("stackcount", {"-r", spec}), 60);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_FALSE(r.timed_out) << "still expanding after 60 s";
    EXPECT_LT(secs, 10.0);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    const std::string what = spec[0] == 't' ? "tracepoints" : "functions";
    EXPECT_NE(r.err.find("0 " + what + " matched by \"" + std::string(spec) + "\""),
              std::string::npos)
        << r.err;
  }
}

// Row 10: a 100,000-character pattern crashed std::regex's compiler
// (SIGSEGV); it is a usage error now, regex or glob, in both spec tools.
TEST_F(NewUserRuntime, HugePatternIsAUsageError) {
  const std::string huge(100000, 'a');
  const std::string head = "\"" + std::string(32, 'a') + "...\" is 100000 characters long: ";
  struct Case {
    std::vector<std::string> argv;
    std::string line;
  };
  const Case cases[] = {
      {tool("stackcount", {"-r", huge}),
       "stackcount: regular expression " + head + "the limit is 4096"},
      {tool("stackcount", {huge}), "stackcount: pattern " + head + "the limit is 4096"},
      {tool("stackcount", {"-r", "t:sched:" + huge}),
       "stackcount: regular expression " + head + "the limit is 4096"},
      {tool("stacksnoop", {huge}), "stacksnoop: pattern " + head + "the limit is 4096"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.argv[0] + " " + c.argv[1].substr(0, 10));
    auto r = run_tool(c.argv);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(first_line(r.err), c.line);
    EXPECT_NE(r.err.find("USAGE:"), std::string::npos);
  }
}

// Row 13: -c 5 on a 2-CPU machine gave perf's EINVAL (or tracing_cpumask's
// EOVERFLOW with -K); now one line naming the online CPUs, before anything
// is set up.
TEST_F(NewUserRuntime, OfflineCpuIsNamed) {
  auto online = read_file("/sys/devices/system/cpu/online");
  ASSERT_TRUE(online.ok()) << online.error().str();
  auto cpus = perf::online_cpus();
  ASSERT_TRUE(cpus.ok());
  const std::string cpu = std::to_string(cpus->back() + 1);
  const std::string why =
      "CPU " + cpu + " is not online (online CPUs: " + std::string(trim(*online)) + ")\n";
  struct Case {
    std::vector<std::string> argv;
    std::string err;
  };
  const Case cases[] = {
      {tool("stackcount", {"-c", cpu, "t:sched:sched_switch"}), "stackcount: " + why},
      {tool("stackcount", {"-K", "-c", cpu, "t:sched:sched_switch"}), "stackcount: " + why},
      {tool("stackcount", {"-c", cpu, "c:malloc"}), "stackcount: " + why},
      {tool("profile", {"-C", cpu, "1"}), "profile: " + why},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.argv[1] + " " + c.argv[2]);
    auto r = run_tool(c.argv);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, c.err);
    EXPECT_EQ(r.out, "");
  }
}

// Row 14: a uprobe on a stripped copy of a workload said "0 functions
// matched", as if main were not there.
TEST_F(NewUserRuntime, StrippedBinarySaysItIsStripped) {
  if (access(kStrip, X_OK) != 0) GTEST_SKIP() << kStrip << " is missing (binutils)";
  char tmpl[] = "/tmp/tracekit-stripped-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string plain = dir + "/plain", stripped = dir + "/stripped", bare = dir + "/bare";
  {
    std::ifstream in(workload_path("stackwork"), std::ios::binary);
    ASSERT_TRUE(in.good()) << workload_path("stackwork");
    std::ofstream(plain, std::ios::binary) << in.rdbuf();
  }
  // strip keeps .dynsym (what the dynamic linker needs); removing it too
  // leaves no table at all.
  EXPECT_EQ(run({kStrip, "-o", stripped, plain}).exit_code, 0);
  EXPECT_EQ(run({kStrip, "--remove-section=.dynsym", "-o", bare, plain}).exit_code, 0);

  auto s = run_tool(tool("stackcount", {stripped + ":main"}), 30);
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.err, "stackcount: 0 functions matched by \"" + stripped + ":main\": " + stripped +
                       " has no symbol table (.symtab): it is stripped, so only its dynamic "
                       "symbols (.dynsym) could be matched (probe an unstripped build of it)\n");
  auto b = run_tool(tool("stackcount", {bare + ":main"}), 30);
  EXPECT_EQ(b.exit_code, 1);
  EXPECT_EQ(b.err, "stackcount: 0 functions matched by \"" + bare + ":main\": " + bare +
                       " has no symbol table (neither .symtab nor .dynsym): it is stripped, so "
                       "no function can be found by name (probe an unstripped build of it)\n");
  // The unstripped copy: a wrong name is bcc's plain zero-match line.
  auto p = run_tool(tool("stackcount", {plain + ":no_such_function_xyz"}), 30);
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_EQ(p.err, "stackcount: 0 functions matched by \"" + plain +
                       ":no_such_function_xyz\". Exiting.\n");

  for (const std::string& f : {plain, stripped, bare}) unlink(f.c_str());
  rmdir(dir.c_str());
}

// Row 15: without root, stackcount c:malloc said tracefs had no events
// directory ("is tracefs mounted there?"), offcputime that sched_switch did
// not exist. Every tool now names the permission problem.
class NonRootRuntime : public NewUserRuntime {
 protected:
  void SetUp() override {
    NewUserRuntime::SetUp();
    if (IsSkipped()) return;
    if (access(kSetpriv, X_OK) != 0) GTEST_SKIP() << kSetpriv << " is missing (util-linux)";
    if (as_nobody(tool("stackcount", {"-h"})).exit_code != 0)
      GTEST_SKIP() << "user nobody cannot run " << tool_path("stackcount")
                   << " (a directory on its path is not world-searchable)";
    events_ = tracing_ + "/events";
    if (as_nobody({"/usr/bin/test", "-x", events_}).exit_code == 0)
      GTEST_SKIP() << "user nobody may enter " << events_ << " here: no permission error to see";
  }
  // setpriv execs the tool: its PID is the tool's.
  RunResult as_nobody(std::vector<std::string> argv) {
    std::vector<std::string> full{kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
    full.insert(full.end(), argv.begin(), argv.end());
    return run_tool(full);
  }
  std::string events_;
};

TEST_F(NonRootRuntime, TracefsToolsSayRunAsRoot) {
  const std::vector<std::vector<std::string>> cases = {
      {"stackcount", "c:malloc"},
      {"stackcount", "t:sched:sched_switch"},
      {"stackcount", "-K", "t:sched:sched_switch"},
      {"stacksnoop", "t:sched:sched_switch"},
      {"offcputime", "1"},
      {"reset-tracing"},
      {"reset-tracing", "-f"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c[0] + (c.size() > 1 ? " " + c[1] : ""));
    auto r = as_nobody(tool(c[0], {c.begin() + 1, c.end()}));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, c[0] + ": no permission to use tracefs: " + events_ +
                         ": Permission denied (run as root)\n");
  }
}

TEST_F(NonRootRuntime, ProfileNamesPerfEventParanoid) {
  auto text = read_file("/proc/sys/kernel/perf_event_paranoid");
  ASSERT_TRUE(text.ok());
  auto level = parse_int<int>(trim(*text));
  ASSERT_TRUE(level.has_value());
  // CPU-wide sampling is open to every user at 0 and below.
  if (*level <= 0)
    GTEST_SKIP() << "kernel.perf_event_paranoid is " << *level << ": profile works without root";
  auto r = as_nobody(tool("profile", {"1"}));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(first_line(r.err).rfind("profile: cannot open perf event: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(": Permission denied (run as root or lower "
                       "/proc/sys/kernel/perf_event_paranoid, now " +
                       std::to_string(*level) + ")\n"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tracekit::testing
