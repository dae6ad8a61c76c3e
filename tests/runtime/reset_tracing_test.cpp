// reset-tracing on the real kernel (root): a child sets up like a tool and is
// killed with SIGKILL, then the tool must remove what it left. -f is not run
// here: it also ends live runs, which would disturb tools and tests running
// at the same time (tests/unit/tracefs/leftovers_test.cpp covers what it
// does, on a fake tree). A snapshot of tracefs is compared before and after
// each test, leaving out other tracekit runs (live, or killed: the tool
// removes those too).
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "harness.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::testing {
namespace {

namespace fs = std::filesystem;

class TracefsResetTracingRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs control files";
    tool_ = tool_path("reset-tracing");
    if (!fs::exists(tool_)) GTEST_SKIP() << tool_ << " is not built";
    auto h = run({tool_, "-h"}, 10);
    if (!contains(h.out, "USAGE: reset-tracing"))
      FAIL() << tool_ << " does not run reset-tracing (its tool-table row in "
             << "tools/reset-tracing/main.cpp?): " << h.err;
    auto d = tracefs::tracing_dir();
    ASSERT_TRUE(d) << d.error().str();
    top_ = *d;
    ours_.insert(getpid());
    before_ = snapshot();
  }
  void TearDown() override {
    for (pid_t c : children_) kill_and_reap(c);
    if (top_.empty()) return;
    tracefs::remove_leftovers(top_);  // whatever a failed test left
    EXPECT_EQ(before_, snapshot()) << "tracefs changed by the test";
  }

  TracingChild child() {
    TracingChild c = start_tracing_child(top_);
    if (c.pid > 0) {
      ours_.insert(c.pid);
      children_.push_back(c.pid);
    }
    return c;
  }
  void kill_child(const TracingChild& c) {
    kill_and_reap(c.pid);
    children_.erase(std::remove(children_.begin(), children_.end(), c.pid), children_.end());
  }

  // Instances, probe definitions and the top-level triggers that are set,
  // sorted.
  std::vector<std::string> snapshot() const {
    std::vector<std::string> s = tracefs_objects(top_, ours_);
    std::sort(s.begin(), s.end());
    return s;
  }

  bool gone(const TracingChild& c) const {
    return !fs::exists(top_ + "/instances/" + c.instance) &&
           !fs::exists(top_ + "/events/" + c.group) &&
           !contains(slurp(top_ + "/dynamic_events"), c.group + "/");
  }

  std::string tool_, top_;
  std::set<int> ours_;
  std::vector<pid_t> children_;
  std::vector<std::string> before_;
};

TEST_F(TracefsResetTracingRuntime, RemovesWhatAKilledRunLeft) {
  TracingChild c = child();
  ASSERT_FALSE(c.instance.empty()) << "the child could not set up";
  kill_child(c);
  ASSERT_FALSE(gone(c));
  auto r = run({tool_}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("Removing what dead tracekit runs left in " + top_ + "...\n", 0), 0u)
      << r.out;
  EXPECT_TRUE(contains(r.out, "\nremoved instance " + c.instance + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nremoved probe " + c.group + "/" + c.event + "\n")) << r.out;
  EXPECT_TRUE(contains(r.out, "\nDone: ")) << r.out;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(gone(c));
}

TEST_F(TracefsResetTracingRuntime, QuietSaysNothing) {
  TracingChild c = child();
  ASSERT_FALSE(c.instance.empty());
  kill_child(c);
  auto r = run({tool_, "-q"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(gone(c));
}

TEST_F(TracefsResetTracingRuntime, LeavesLiveRunsAlone) {
  TracingChild c = child();
  ASSERT_FALSE(c.instance.empty());
  auto r = run({tool_}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(contains(r.out, std::to_string(c.pid))) << r.out;
  EXPECT_TRUE(fs::exists(top_ + "/instances/" + c.instance));
  EXPECT_TRUE(fs::exists(top_ + "/events/" + c.group + "/" + c.event));
  kill_child(c);
  r = run({tool_}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(gone(c)) << r.out;
}

TEST_F(TracefsResetTracingRuntime, UsageAndUsageErrors) {
  auto h = run({tool_, "-h"}, 10);
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_EQ(h.out.rfind("USAGE: reset-tracing [-fhq]\n", 0), 0u) << h.out;
  EXPECT_TRUE(contains(h.out, "  examples:\n")) << h.out;
  auto bad = run({tool_, "-x"}, 10);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "reset-tracing: unrecognised option '-x'\nUSAGE: reset-tracing [-fhq]\n");
  auto extra = run({tool_, "now"}, 10);
  EXPECT_EQ(extra.exit_code, 2);
  EXPECT_TRUE(contains(extra.err, "unexpected argument 'now'")) << extra.err;
}

// perf-tools' name, which users type (issue 38): a link to the same tool,
// with perf-tools' usage words, -q as quiet as reset-tracing's.
TEST_F(TracefsResetTracingRuntime, ResetFtraceIsItsPerfToolsName) {
  const std::string ftrace = tool_path("reset-ftrace");
  auto h = run({ftrace, "-h"}, 10);
  EXPECT_EQ(h.exit_code, 0) << h.err;
  EXPECT_EQ(h.out,
            "USAGE: reset-ftrace [-fhq]\n"
            "                    -h, --help  # this usage message\n"
            "                    -f, --force # force: delete ftrace lock file; also end live runs' "
            "tracing\n"
            "                                  and reset global ftrace state (current_tracer, "
            "filters, options)\n"
            "                    -q, --quiet # quiet: reset, but say nothing\n"
            "  examples:\n"
            "       reset-ftrace    # remove what killed ftrace sessions left behind\n"
            "       reset-ftrace -f # also disable active ftrace sessions\n");
  auto bad = run({ftrace, "-x"}, 10);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "reset-ftrace: unrecognised option '-x'\nUSAGE: reset-ftrace [-fhq]\n");
  // The same work: a killed run's leftovers go, quietly with -q.
  TracingChild c = child();
  ASSERT_FALSE(c.instance.empty());
  kill_child(c);
  auto r = run({ftrace, "-q"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(gone(c));
  // ... and through the multi-call binary.
  auto m = run({tool_path("tracekit"), "reset-ftrace", "-h"}, 10);
  EXPECT_EQ(m.out, h.out);
}

TEST_F(TracefsResetTracingRuntime, NotRootIsARuntimeFailure) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(p[1], 2);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    if (setgroups(0, nullptr) != 0 || setresgid(65534, 65534, 65534) != 0 ||
        setresuid(65534, 65534, 65534) != 0)
      _exit(126);
    execl(tool_.c_str(), "reset-tracing", nullptr);
    _exit(127);
  }
  close(p[1]);
  std::string err;
  char buf[512];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) err.append(buf, static_cast<size_t>(n));
  close(p[0]);
  int st = 0;
  waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFEXITED(st));
  if (WEXITSTATUS(st) == 127 || WEXITSTATUS(st) == 126)
    GTEST_SKIP() << "cannot run " << tool_ << " as nobody";
  EXPECT_EQ(WEXITSTATUS(st), 1) << err;
  EXPECT_EQ(err.rfind("reset-tracing: ", 0), 0u) << err;
  EXPECT_TRUE(contains(err, "run as root")) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
}

}  // namespace
}  // namespace tracekit::testing
