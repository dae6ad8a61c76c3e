// reset-tracing on the real kernel (root): a child sets up like a tool and is
// killed with SIGKILL, then the tool must remove what it left. -f is not run
// here: it also ends live runs, which would disturb tools and tests running
// at the same time (tests/unit/tracefs/leftovers_test.cpp covers what it
// does, on a fake tree). A snapshot of tracefs is compared before and after
// each test, leaving out other tracekit runs (live, or killed: the tool
// removes those too).
#include <elf.h>
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "tracefs/dynamic_events.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::testing {
namespace {

namespace fs = std::filesystem;
using tracefs::owner_pid;

std::string slurp(const std::string& path) {
  auto t = read_file(path);
  return t ? *t : std::string();
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

// The file offset of an ELF executable's entry point.
std::optional<uint64_t> entry_offset(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh)) return std::nullopt;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type == PT_LOAD && eh.e_entry >= ph.p_vaddr && eh.e_entry < ph.p_vaddr + ph.p_filesz)
      return eh.e_entry - ph.p_vaddr + ph.p_offset;
  }
  return std::nullopt;
}

// A child that sets up like a tool: an instance with a stacktrace trigger on
// sched_switch, a uprobe group whose probe the instance enables (with a
// trigger too); it reports the names on a pipe and waits for SIGKILL.
struct Child {
  pid_t pid = -1;
  std::string instance, group, event;
};

Child start_tracing_child(const std::string& top) {
  int p[2];
  if (pipe(p) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    close(p[0]);
    auto i = tracefs::Instance::create(top);
    auto g = tracefs::ProbeGroup::open(top);
    auto off = entry_offset("/bin/true");
    if (!i || !g || !off) _exit(1);
    auto e = g->add_uprobe("/bin/true", *off, false, "entry");
    if (!e || !i->add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1") ||
        !i->enable_event("sched", "sched_switch") || !i->enable_event(g->name(), *e) ||
        !i->add_trigger(g->name(), *e, "stacktrace"))
      _exit(1);
    std::string msg = i->name() + " " + g->name() + " " + *e + "\n";
    if (write(p[1], msg.data(), msg.size()) < 0) _exit(1);
    for (;;) pause();
  }
  close(p[1]);
  Child c;
  c.pid = pid;
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) {
    got.append(buf, static_cast<size_t>(n));
    if (got.find('\n') != std::string::npos) break;
  }
  close(p[0]);
  std::istringstream in(got);
  in >> c.instance >> c.group >> c.event;
  return c;
}

void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

class TracefsResetTracingRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs control files";
    tool_ = tool_path("reset-tracing");
    if (!fs::exists(tool_)) GTEST_SKIP() << tool_ << " is not built";
    auto h = run({tool_, "-h"}, 10);
    if (!contains(h.out, "USAGE: reset-tracing"))
      GTEST_SKIP() << tool_ << " does not run reset-tracing yet (not registered in "
                   << "tools/tracekit.cpp?): " << h.err;
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

  Child child() {
    Child c = start_tracing_child(top_);
    if (c.pid > 0) {
      ours_.insert(c.pid);
      children_.push_back(c.pid);
    }
    return c;
  }
  void kill_child(const Child& c) {
    kill_and_reap(c.pid);
    children_.erase(std::remove(children_.begin(), children_.end(), c.pid), children_.end());
  }

  bool foreign(const std::string& name) const {
    // Names like "tracekit_bench_<pid>" (other tools of the project) too.
    return name.rfind("tracekit", 0) == 0 && !ours_.count(owner_pid(name));
  }
  // Instances, probe definitions and the top-level triggers that are set.
  std::vector<std::string> snapshot() const {
    std::vector<std::string> s;
    for (auto& e : fs::directory_iterator(top_ + "/instances"))
      if (!foreign(e.path().filename())) s.push_back("instance " + e.path().filename().string());
    for (const char* f : {"dynamic_events", "uprobe_events", "kprobe_events"}) {
      const std::string text = slurp(top_ + "/" + f);
      for (auto line : split(text, '\n'))
        if (!line.empty() && !foreign(tracefs::parse_probe_line(line).group))
          s.push_back(std::string(f) + " " + std::string(line));
    }
    for (auto& sys : fs::directory_iterator(top_ + "/events")) {
      if (!sys.is_directory() || foreign(sys.path().filename())) continue;
      for (auto& ev : fs::directory_iterator(sys.path())) {
        if (!ev.is_directory()) continue;
        const std::string text = slurp(ev.path().string() + "/trigger");
        for (auto line : split(text, '\n'))
          if (!tracefs::trigger_removal(line).empty())
            s.push_back("trigger " + ev.path().string() + " " + std::string(line));
      }
    }
    std::sort(s.begin(), s.end());
    return s;
  }

  bool gone(const Child& c) const {
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
  Child c = child();
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
  Child c = child();
  ASSERT_FALSE(c.instance.empty());
  kill_child(c);
  auto r = run({tool_, "-q"}, 30);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(gone(c));
}

TEST_F(TracefsResetTracingRuntime, LeavesLiveRunsAlone) {
  Child c = child();
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
