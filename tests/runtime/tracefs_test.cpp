// Instances, probe groups and the leftovers sweep on the real kernel (root).
// Every test compares a snapshot of tracefs (instances, probe lists, every
// top-level trigger that is set, sched_switch's enable and filter) before and
// after: nothing of ours may remain. Entries of other tracekit runs (other
// tests and tools running at the same time, live or killed, whose leftovers
// a sweep here may remove) are left out of the snapshot, so that they cannot
// make these tests fail.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "tracefs/dynamic_events.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

// A function of this test binary to put a uprobe on. noinline and the asm
// keep it a real call that the compiler cannot fold away.
extern "C" __attribute__((noinline)) int tracefs_test_probe_target(int x) {
  asm volatile("" : "+r"(x));
  return x + 1;
}

namespace tracekit::tracefs {
namespace {

namespace fs = std::filesystem;

using tracekit::testing::contains;
using tracekit::testing::entry_offset;
using tracekit::testing::kill_and_reap;
using tracekit::testing::slurp;
using tracekit::testing::start_tracing_child;
using tracekit::testing::tracefs_objects;
using tracekit::testing::TracingChild;

// What the kernel's tracefs holds that a test could leave behind.
struct Snapshot {
  std::vector<std::string> objects;  // tracefs_objects(): instances, probes, triggers set
  std::string sched_switch_enable, sched_switch_filter;
  bool operator==(const Snapshot&) const = default;
};

std::ostream& operator<<(std::ostream& o, const Snapshot& s) {
  for (auto& l : s.objects) o << l << "\n";
  return o << "sched_switch enable " << s.sched_switch_enable << " filter "
           << s.sched_switch_filter;
}

class TracefsRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs control files";
    auto d = tracing_dir();
    ASSERT_TRUE(d) << d.error().str();
    top_ = *d;
    ours_.insert(getpid());
    before_ = snapshot();
  }
  void TearDown() override {
    if (top_.empty()) return;
    EXPECT_EQ(before_, snapshot()) << "tracefs changed by the test";
  }

  // Entries of other tracekit runs are someone else's business: left out.
  Snapshot snapshot() const {
    Snapshot s;
    s.objects = tracefs_objects(top_, ours_);
    s.sched_switch_enable = slurp(top_ + "/events/sched/sched_switch/enable");
    s.sched_switch_filter = slurp(top_ + "/events/sched/sched_switch/filter");
    return s;
  }

  std::string top_;
  std::set<int> ours_;
  Snapshot before_;
};

using TracefsInstanceRuntime = TracefsRuntime;
using TracefsProbeRuntime = TracefsRuntime;
using TracefsLeftoversRuntime = TracefsRuntime;

TEST_F(TracefsInstanceRuntime, TriggerFilterAndEnableAreUndoneAndTheInstanceRemoved) {
  const std::string ev = top_ + "/events/sched/sched_switch/";
  const std::string top_trigger = slurp(ev + "trigger");
  std::vector<std::string> log;
  std::string path;
  ::testing::internal::CaptureStderr();
  {
    auto r = Instance::create(top_);
    ASSERT_TRUE(r) << r.error().str();
    Instance& i = *r;
    path = i.path();
    ASSERT_TRUE(fs::is_directory(path));
    ASSERT_TRUE(i.set_filter("sched", "sched_switch", "prev_pid == 1"));
    auto t = i.add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1");
    ASSERT_TRUE(t) << t.error().str();
    ASSERT_TRUE(i.enable_event("sched", "sched_switch"));
    // "1*": enabled, with a trigger attached.
    EXPECT_EQ(i.read("events/sched/sched_switch/enable")->substr(0, 1), "1");
    EXPECT_EQ(*i.read("events/sched/sched_switch/filter"), "prev_pid == 1\n");
    EXPECT_TRUE(contains(*i.read("events/sched/sched_switch/trigger"),
                         "stacktrace:unlimited if common_pid == 1\n"));
    // The top level does not see any of it.
    EXPECT_EQ(slurp(ev + "trigger"), top_trigger);
    EXPECT_EQ(slurp(ev + "filter"), before_.sched_switch_filter);
    EXPECT_EQ(slurp(ev + "enable"), before_.sched_switch_enable);
    record_writes(&log);
  }
  record_writes(nullptr);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "");  // every undo step and the rmdir succeeded
  EXPECT_FALSE(fs::exists(path));
  const std::string e = path + "/events/sched/sched_switch/";
  EXPECT_EQ(log, (std::vector<std::string>{"write " + e + "enable 0",
                                           "append " + e + "trigger !stacktrace",
                                           "write " + e + "filter 0", "rmdir " + path}));
  EXPECT_EQ(slurp(ev + "trigger"), top_trigger);
}

TEST_F(TracefsInstanceRuntime, ASecondIdenticalTriggerFailsWithEexist) {
  auto r = Instance::create(top_);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1"));
  auto again = r->add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1");
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().err, EEXIST);
  EXPECT_TRUE(contains(again.error().hint, "already set")) << again.error().str();
}

TEST_F(TracefsInstanceRuntime, ABadFilterCarriesTheKernelsErrorLog) {
  auto r = Instance::create(top_);
  ASSERT_TRUE(r);
  auto s = r->set_filter("sched", "sched_switch", "bogus_field == 1");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().err, EINVAL);
  // Filter errors land in the instance's own error_log.
  EXPECT_TRUE(contains(s.error().hint,
                       "error_log: event filter parse error: error: Field not found "
                       "(command: bogus_field == 1)"))
      << s.error().str();
  EXPECT_TRUE(contains(last_error_log(r->path()), "Field not found"));
  auto u = r->enable_event("sched", "no_such_event");
  ASSERT_FALSE(u);
  EXPECT_EQ(u.error().err, ENOENT);
}

TEST_F(TracefsInstanceRuntime, OptionsBufferSizeTracingOnAndDrops) {
  auto r = Instance::create(top_);
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->set_option("stacktrace", true));
  EXPECT_EQ(*r->read("options/stacktrace"), "1\n");
  ASSERT_TRUE(r->set_buffer_size_kb(2048));
  // The kernel rounds up to whole sub-buffers: 2048 reads back as 2051.
  auto kb = parse_int<int>(trim(*r->read("buffer_size_kb")));
  ASSERT_TRUE(kb);
  EXPECT_GE(*kb, 2048);
  EXPECT_LT(*kb, 2048 + 16);
  ASSERT_TRUE(r->set_tracing_on(false));
  EXPECT_EQ(*r->read("tracing_on"), "0\n");
  auto bad = r->set_option("no_such_option", true);
  ASSERT_FALSE(bad);
  // A fresh buffer has refused nothing, on every CPU.
  auto online = parse_cpu_list(slurp("/sys/devices/system/cpu/online"));
  ASSERT_TRUE(online && !online->empty());
  for (int cpu : *online) {
    auto d = r->dropped_events(cpu);
    ASSERT_TRUE(d) << d.error().str();
    EXPECT_EQ(*d, 0u) << "cpu " << cpu;
  }
}

TEST_F(TracefsInstanceRuntime, FunctionTracerRefusalIsClear) {
  auto r = Instance::create(top_);
  ASSERT_TRUE(r);
  auto s = r->start_function_tracer({"vfs_read"}, true);
  if (s) {
    // A kernel that allows it (the VM tier's): it runs, and is undone.
    EXPECT_EQ(*r->read("current_tracer"), "function\n");
    return;
  }
  // This machine: lockdown refuses even opening set_ftrace_filter.
  EXPECT_EQ(s.error().err, EPERM) << s.error().str();
  EXPECT_EQ(s.error().message.rfind("the kernel refuses the function tracer", 0), 0u)
      << s.error().str();
  EXPECT_TRUE(contains(s.error().hint, "lockdown")) << s.error().str();
  EXPECT_EQ(*r->read("current_tracer"), "nop\n");
}

TEST_F(TracefsInstanceRuntime, AnOpenBufferMakesRemovalBusy) {
  std::string path;
  int fd = -1;
  ::testing::internal::CaptureStderr();
  {
    auto r = Instance::create(top_);
    ASSERT_TRUE(r);
    path = r->path();
    fd = open((path + "/per_cpu/cpu0/trace_pipe_raw").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
  }
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "tracekit: cleanup: cannot remove tracefs instance: " + path +
                                ": Device or resource busy"))
      << err;
  EXPECT_TRUE(fs::exists(path));
  close(fd);
  ASSERT_TRUE(remove_dir(path));
}

// The file offset of an address of this process, from /proc/self/maps.
std::pair<std::string, uint64_t> file_offset_of(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  auto a = reinterpret_cast<uint64_t>(addr);
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range, perms, off, dev, inode, path;
    in >> range >> perms >> off >> dev >> inode >> path;
    auto dash = range.find('-');
    auto lo = parse_hex<uint64_t>(range.substr(0, dash));
    auto hi = parse_hex<uint64_t>(range.substr(dash + 1));
    if (lo && hi && a >= *lo && a < *hi) return {path, a - *lo + *parse_hex<uint64_t>(off)};
  }
  return {"", 0};
}

size_t count_lines_with(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (auto l : split(text, '\n'))
    if (l.find(needle) != std::string_view::npos) ++n;
  return n;
}

TEST_F(TracefsProbeRuntime, UprobeOnAFunctionOfOursIsAddedHitAndRemoved) {
  auto [exe, off] = file_offset_of(reinterpret_cast<const void*>(&tracefs_test_probe_target));
  ASSERT_FALSE(exe.empty());
  std::string group, event;
  {
    auto g = ProbeGroup::open(top_);
    ASSERT_TRUE(g) << g.error().str();
    EXPECT_TRUE(g->uprobes_supported());
    group = g->name();
    auto e = g->add_uprobe(exe, off, false, "probe-target");
    ASSERT_TRUE(e) << e.error().str();
    event = *e;
    EXPECT_EQ(event, "probe_target");
    std::string listed = slurp(top_ + "/dynamic_events");
    EXPECT_TRUE(contains(listed, "p:" + group + "/probe_target " + exe + ":0x")) << listed;
    EXPECT_TRUE(fs::is_directory(top_ + "/events/" + group + "/" + event));
    {
      // Instances go before the group that their events use.
      auto i = Instance::create(top_);
      ASSERT_TRUE(i);
      ASSERT_TRUE(i->enable_event(group, event));
      int sum = 0;
      for (int k = 0; k < 7; ++k) sum += tracefs_test_probe_target(k);
      EXPECT_EQ(sum, 28);
      EXPECT_EQ(count_lines_with(*i->read("trace"), " " + event + ":"), 7u) << *i->read("trace");
    }
  }
  EXPECT_FALSE(contains(slurp(top_ + "/dynamic_events"), group + "/"));
  EXPECT_FALSE(fs::exists(top_ + "/events/" + group));
}

TEST_F(TracefsProbeRuntime, UprobeOnBinTrueEntry) {
  auto off = entry_offset("/bin/true");
  ASSERT_TRUE(off);
  std::string group;
  {
    auto g = ProbeGroup::open(top_);
    ASSERT_TRUE(g);
    group = g->name();
    auto e = g->add_uprobe("/bin/true", *off, false, "");
    ASSERT_TRUE(e) << e.error().str();
    char hex[32];
    snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(*off));
    EXPECT_EQ(*e, std::string("u_true_") + hex);
    // uprobe_events lists it too.
    EXPECT_TRUE(contains(slurp(top_ + "/uprobe_events"), "p:" + group + "/" + *e + " /bin/true:"));
    auto i = Instance::create(top_);
    ASSERT_TRUE(i);
    ASSERT_TRUE(i->enable_event(group, *e));
    std::vector<pid_t> runs;
    for (int k = 0; k < 3; ++k) {
      pid_t c = fork();
      if (c == 0) {
        execl("/bin/true", "true", nullptr);
        _exit(127);
      }
      int st = 0;
      waitpid(c, &st, 0);
      ASSERT_EQ(WEXITSTATUS(st), 0);
      runs.push_back(c);
    }
    // One hit per run of ours ("true-<pid> [cpu] ... u_true_23d0: (0x...)");
    // other processes may run /bin/true meanwhile.
    const std::string trace = *i->read("trace");
    size_t hits = 0;
    for (auto l : split(trace, '\n'))
      for (pid_t c : runs)
        if (l.find("-" + std::to_string(c) + " ") != std::string_view::npos &&
            l.find(" " + *e + ":") != std::string_view::npos)
          ++hits;
    EXPECT_EQ(hits, 3u) << trace;
  }
  EXPECT_FALSE(contains(slurp(top_ + "/uprobe_events"), group + "/"));
}

TEST_F(TracefsProbeRuntime, AProbeEnabledInAnInstanceCannotBeRemoved) {
  auto off = entry_offset("/bin/true");
  ASSERT_TRUE(off);
  std::optional<ProbeGroup> g;
  {
    auto r = ProbeGroup::open(top_);
    ASSERT_TRUE(r);
    g.emplace(std::move(*r));
  }
  const std::string group = g->name();
  auto e = g->add_uprobe("/bin/true", *off, false, "entry");
  ASSERT_TRUE(e);
  auto i = Instance::create(top_);
  ASSERT_TRUE(i);
  ASSERT_TRUE(i->enable_event(group, *e));
  ::testing::internal::CaptureStderr();
  g.reset();  // the wrong order: the instance still enables the probe
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(contains(err, "tracekit: cleanup: cannot write \"-:" + group + "/entry\": " + top_ +
                                "/dynamic_events: Device or resource busy"))
      << err;
  EXPECT_TRUE(contains(slurp(top_ + "/dynamic_events"), group + "/entry"));
  // Once the instance is gone the probe can go too.
  { Instance gone(std::move(*i)); }
  auto s = write_control(top_ + "/dynamic_events", "-:" + group + "/entry", true, {top_});
  EXPECT_TRUE(s) << s.error().str();
}

TEST_F(TracefsProbeRuntime, KernelErrorsAreExplained) {
  auto g = ProbeGroup::open(top_);
  ASSERT_TRUE(g);
  auto e = g->add_uprobe("/nonexistent/tracekit-test", 0x10, false, "x");
  ASSERT_FALSE(e);
  EXPECT_TRUE(
      contains(e.error().hint, "error_log: trace_uprobe: error: Failed to find the given file"))
      << e.error().str();
  EXPECT_TRUE(g->events().empty());
}

TEST_F(TracefsProbeRuntime, KprobesMissingIsAClearError) {
  auto g = ProbeGroup::open(top_);
  ASSERT_TRUE(g);
  if (g->kprobes_supported()) GTEST_SKIP() << "this kernel has kprobes";
  auto k = g->add_kprobe("vfs_read", false);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().message,
            "this kernel has no kprobes (CONFIG_KPROBES is off): kprobe_events is missing");
  EXPECT_TRUE(g->events().empty());
}

TEST_F(TracefsProbeRuntime, TwoGroupsInOneProcess) {
  auto off = entry_offset("/bin/true");
  ASSERT_TRUE(off);
  auto a = ProbeGroup::open(top_);
  auto b = ProbeGroup::open(top_);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->name(), b->name());
  EXPECT_EQ(owner_pid(a->name()), getpid());
  EXPECT_EQ(owner_pid(b->name()), getpid());
  ASSERT_TRUE(a->add_uprobe("/bin/true", *off, false, "entry"));
  ASSERT_TRUE(b->add_uprobe("/bin/true", *off, false, "entry"));
  EXPECT_TRUE(fs::exists(top_ + "/events/" + a->name() + "/entry"));
  EXPECT_TRUE(fs::exists(top_ + "/events/" + b->name() + "/entry"));
}

TEST_F(TracefsLeftoversRuntime, AKilledRunsInstanceAndProbesAreRemoved) {
  TracingChild c = start_tracing_child(top_);
  ASSERT_GT(c.pid, 0);
  ours_.insert(c.pid);
  ASSERT_FALSE(c.instance.empty()) << "the child could not set up";
  EXPECT_TRUE(fs::exists(top_ + "/instances/" + c.instance));
  EXPECT_TRUE(fs::exists(top_ + "/events/" + c.group + "/" + c.event));
  // Alive: left alone.
  auto alive = remove_leftovers(top_);
  for (auto& r : alive.removed) EXPECT_FALSE(contains(r, std::to_string(c.pid))) << r;
  EXPECT_TRUE(fs::exists(top_ + "/instances/" + c.instance));

  kill_and_reap(c.pid);
  auto cleaned = remove_leftovers(top_);
  EXPECT_NE(std::find(cleaned.removed.begin(), cleaned.removed.end(), "instance " + c.instance),
            cleaned.removed.end());
  EXPECT_NE(
      std::find(cleaned.removed.begin(), cleaned.removed.end(), "probe " + c.group + "/" + c.event),
      cleaned.removed.end());
  for (auto& f : cleaned.failed) EXPECT_FALSE(contains(f, std::to_string(c.pid))) << f;
  EXPECT_FALSE(fs::exists(top_ + "/instances/" + c.instance));
  EXPECT_FALSE(fs::exists(top_ + "/events/" + c.group));
  EXPECT_FALSE(contains(slurp(top_ + "/dynamic_events"), c.group + "/"));
}

TEST_F(TracefsLeftoversRuntime, AProbeEnabledAtTheTopLevelIsTurnedOffFirst) {
  // A dead owner for sure: above the largest pid_max Linux allows.
  const std::string group = "tracekit_99999999";
  ours_.insert(99999999);
  auto off = entry_offset("/bin/true");
  ASSERT_TRUE(off);
  char def[128];
  snprintf(def, sizeof def, "p:%s/ev /bin/true:0x%llx", group.c_str(),
           static_cast<unsigned long long>(*off));
  const std::string list = top_ + "/dynamic_events";
  ASSERT_TRUE(write_control(list, def, true, {top_}));
  const std::string ev = top_ + "/events/" + group + "/ev/";
  ASSERT_TRUE(write_control(ev + "filter", "common_pid == 5", false, {top_}));
  ASSERT_TRUE(write_control(ev + "trigger", "stacktrace if common_pid == 5", true, {top_}));
  ASSERT_TRUE(write_control(ev + "enable", "1", false, {top_}));
  // Enabled: the kernel refuses to remove it as it is.
  auto busy = write_control(list, "-:" + group + "/ev", true, {top_});
  ASSERT_FALSE(busy);
  EXPECT_EQ(busy.error().err, EBUSY);

  auto c = remove_leftovers(top_);
  EXPECT_NE(std::find(c.removed.begin(), c.removed.end(), "probe " + group + "/ev"),
            c.removed.end());
  EXPECT_FALSE(contains(slurp(list), group + "/"));
  EXPECT_FALSE(fs::exists(top_ + "/events/" + group));
}

}  // namespace
}  // namespace tracekit::tracefs
