// Leftovers of dead runs in a fake tracefs tree: which names are swept, the
// exact writes that undo an instance and a probe group, and reset_global.
// Dead owners use pids above the largest pid_max Linux allows (4194304).
#include "tracefs/leftovers.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <sstream>

#include "fake_tree.hpp"
#include "tracefs/instance.hpp"

namespace tracekit::tracefs {
namespace {

namespace fs = std::filesystem;

using Lines = std::vector<std::string>;

const std::string kTriggerHeader =
    "# Available triggers:\n# traceon traceoff stacktrace enable_event disable_event\n";

TEST(TracefsOwnerPidTest, Table) {
  struct Case {
    const char* name;
    int want;
  } cases[] = {
      {"tracekit_123_0", 123},
      {"tracekit_123", 123},
      {"tracekit_123_17", 123},
      {"tracekit_1", 1},
      {"tracekit_", -1},
      {"tracekit", -1},
      {"tracekit_12x", -1},
      {"tracekit_12_x", -1},
      {"tracekit_1_2_3", -1},
      {"tracekit_0", -1},
      {"tracekit_-5", -1},
      {"tracekit_+5", -1},
      {"tracekit_12_", -1},
      {"foo_12", -1},
      {"xtracekit_12", -1},
      {"tracekit__1", -1},
      {"tracekit_99999999_0", 99999999},
  };
  for (const auto& c : cases) EXPECT_EQ(owner_pid(c.name), c.want) << c.name;
}

TEST(TracefsProbeLineTest, Table) {
  struct Case {
    const char* line;
    const char* group;
    const char* event;
  } cases[] = {
      {"p:tracekit_123/ev /bin/true:0x0000000000002490", "tracekit_123", "ev"},
      {"r:tracekit_1_2/r_vfs_read vfs_read $retval", "tracekit_1_2", "r_vfs_read"},
      {"r10:kprobes/x do_sys_open", "kprobes", "x"},
      {"p:uprobes/p_true_0x2490 /bin/true:0x2490\n", "uprobes", "p_true_0x2490"},
      {"e:eprobes/e sched.sched_switch", "eprobes", "e"},
      {"", "", ""},
      {"garbage", "", ""},
      {"p:noslash /bin/true:0x1", "", ""},
      {"p:/ev x", "", ""},
      {"p:g/ x", "", ""},
  };
  for (const auto& c : cases) {
    auto p = parse_probe_line(c.line);
    EXPECT_EQ(p.group, c.group) << c.line;
    EXPECT_EQ(p.event, c.event) << c.line;
  }
}

TEST(TracefsLeftoversTest, CleanTreeIsNotWritten) {
  FakeTree t;
  t.put("uprobe_events", "p:uprobes/x /bin/true:0x1\n");
  t.mkdir("instances/someone_else");
  auto c = remove_leftovers(t.dir());
  EXPECT_TRUE(c.removed.empty());
  EXPECT_TRUE(c.failed.empty());
  EXPECT_TRUE(t.log.empty());
  EXPECT_TRUE(t.has("instances/someone_else"));
}

TEST(TracefsLeftoversTest, DeadInstanceIsTurnedOffThenRemoved) {
  FakeTree t;
  const std::string i = "instances/tracekit_99999999_0";
  t.put(i + "/events/enable", "X\n");
  t.put(i + "/events/sched/sched_switch/trigger",
        kTriggerHeader +
            "stacktrace:unlimited if common_pid == 5\nenable_event:sched:sched_wakeup:count=1\n");
  t.put(i + "/events/sched/sched_wakeup/trigger", kTriggerHeader);
  t.put(i + "/events/tracekit_99999999/ev/trigger", kTriggerHeader + "traceoff:unlimited\n");
  t.put(i + "/current_tracer", "function\n");
  t.put(i + "/set_ftrace_filter", "vfs_read\nvfs_write\n");
  auto c = remove_leftovers(t.dir());
  const std::string T = "T/" + i;
  EXPECT_EQ(
      t.writes(),
      (Lines{
          "write " + T + "/events/enable 0",
          "append " + T + "/events/sched/sched_switch/trigger !stacktrace",
          "append " + T + "/events/sched/sched_switch/trigger !enable_event:sched:sched_wakeup",
          "append " + T + "/events/tracekit_99999999/ev/trigger !traceoff",
          "write " + T + "/current_tracer nop",
          "write " + T + "/set_ftrace_filter ",
          "rmdir " + T,
      }));
  EXPECT_EQ(t.get(i + "/events/sched/sched_switch/trigger"),
            kTriggerHeader +
                "stacktrace:unlimited if common_pid == 5\nenable_event:sched:sched_wakeup:count=1\n"
                "!stacktrace\n!enable_event:sched:sched_wakeup\n");
  EXPECT_EQ(t.get(i + "/events/enable"), "0\n");
  EXPECT_EQ(t.get(i + "/current_tracer"), "nop\n");
  EXPECT_EQ(t.get(i + "/set_ftrace_filter"), "");
  // A fake directory with files in it cannot be removed: reported as failed.
  EXPECT_TRUE(c.removed.empty());
  EXPECT_EQ(c.failed, (Lines{"instance tracekit_99999999_0: Directory not empty"}));
}

// The sweep says what it starts on (with the triggers, each of which costs
// the kernel a synchronisation), turns tracing off first, and stops between
// steps when asked: what is left stays for the next sweep.
TEST(TracefsLeftoversTest, SweepReportsProgressAndStopsWhenInterrupted) {
  FakeTree t;
  const std::string i = "instances/tracekit_99999999_0";
  t.put(i + "/tracing_on", "1\n");
  t.put(i + "/events/enable", "X\n");
  t.put(i + "/events/sched/sched_switch/trigger", kTriggerHeader + "stacktrace:unlimited\n");
  t.put(i + "/events/sched/sched_wakeup/trigger", kTriggerHeader + "stacktrace:unlimited\n");
  t.put(i + "/events/sched/sched_waking/trigger", kTriggerHeader + "traceoff:unlimited\n");
  t.put("uprobe_events", "p:tracekit_99999999/ev1 /bin/true:0x0000000000002490\n");
  Lines started;
  int asked = 0;
  SweepHooks hooks;
  hooks.starting = [&](const std::string& what) { started.push_back(what); };
  hooks.interrupted = [&] { return ++asked > 3; };
  auto c = remove_leftovers(t.dir(), false, hooks);
  EXPECT_TRUE(c.interrupted);
  EXPECT_EQ(started, (Lines{"instance tracekit_99999999_0, 3 triggers"}));
  const std::string T = "T/" + i;
  EXPECT_EQ(t.writes(), (Lines{
                            "write " + T + "/tracing_on 0",
                            "write " + T + "/events/enable 0",
                            "append " + T + "/events/sched/sched_switch/trigger !stacktrace",
                        }));
  EXPECT_TRUE(c.removed.empty());
  EXPECT_TRUE(c.failed.empty());
  EXPECT_TRUE(t.has(i));
  EXPECT_EQ(t.get("uprobe_events"), "p:tracekit_99999999/ev1 /bin/true:0x0000000000002490\n");

  // Not interrupted: the rest, then the probe, each announced. (A fake
  // trigger file keeps a removed trigger's line: still 3, where the kernel
  // would list 2.)
  t.log.clear();
  started.clear();
  hooks.interrupted = [] { return false; };
  c = remove_leftovers(t.dir(), false, hooks);
  EXPECT_FALSE(c.interrupted);
  EXPECT_EQ(started, (Lines{"instance tracekit_99999999_0, 3 triggers",
                            "probe tracekit_99999999/ev1"}));
  EXPECT_EQ(c.removed, (Lines{"probe tracekit_99999999/ev1"}));
}

// A killed run's hundreds of probes: the first five named, the rest said
// in one line.
TEST(TracefsLeftoversTest, SweepNamesTheFirstFewOfManyLeftovers) {
  FakeTree t;
  std::string events;
  for (int i = 0; i < 8; ++i)
    events += "p:tracekit_99999997/ev" + std::to_string(i) + " /bin/true:0x0000000000002490\n";
  t.put("uprobe_events", events);
  std::ostringstream warn;
  ASSERT_TRUE(sweep_dead_runs(t.dir(), "funccount", warn, [] { return false; }));
  std::string expected;
  for (int i = 0; i < 5; ++i)
    expected += "funccount: removing probe tracekit_99999997/ev" + std::to_string(i) +
                ", left by a dead run...\n";
  expected += "funccount: removing more that dead runs left...\n";
  EXPECT_EQ(warn.str(), expected);
}

TEST(TracefsLeftoversTest, SweepDeadRunsSaysWhatAndEndsWhenInterrupted) {
  FakeTree t;
  t.mkdir("instances/tracekit_99999997_0");
  t.put("uprobe_events", "p:tracekit_99999997/ev1 /bin/true:0x0000000000002490\n");
  std::ostringstream warn;
  auto st = sweep_dead_runs(t.dir(), "stackcount", warn, [] { return false; });
  EXPECT_TRUE(st.ok());
  EXPECT_EQ(warn.str(),
            "stackcount: removing instance tracekit_99999997_0, left by a dead run...\n"
            "stackcount: removing probe tracekit_99999997/ev1, left by a dead run...\n");
  EXPECT_FALSE(t.has("instances/tracekit_99999997_0"));

  t.mkdir("instances/tracekit_99999996_0");
  t.put("instances/tracekit_99999996_0/tracing_on", "1\n");
  std::ostringstream warn2;
  st = sweep_dead_runs(t.dir(), "stacksnoop", warn2, [] { return true; });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EINTR);
  EXPECT_TRUE(t.has("instances/tracekit_99999996_0"));
}

TEST(TracefsLeftoversTest, QuietDeadInstanceIsJustRemoved) {
  FakeTree t;
  t.mkdir("instances/tracekit_99999998_3");
  t.mkdir("instances/tracekit_99999997_0");
  auto c = remove_leftovers(t.dir());
  EXPECT_EQ(c.removed, (Lines{"instance tracekit_99999997_0", "instance tracekit_99999998_3"}));
  EXPECT_TRUE(c.failed.empty());
  EXPECT_FALSE(t.has("instances/tracekit_99999998_3"));
  EXPECT_EQ(t.writes(), (Lines{"rmdir T/instances/tracekit_99999997_0",
                               "rmdir T/instances/tracekit_99999998_3"}));
}

TEST(TracefsLeftoversTest, LiveRunsAreKeptUnlessAskedAndOursAlways) {
  FakeTree t;
  const std::string mine = "tracekit_" + std::to_string(getpid()) + "_0";
  const std::string parent = "tracekit_" + std::to_string(getppid()) + "_0";
  t.mkdir("instances/" + mine);
  t.mkdir("instances/" + parent);
  t.mkdir("instances/tracekit_x");
  auto c = remove_leftovers(t.dir());
  EXPECT_TRUE(c.removed.empty());
  EXPECT_TRUE(t.log.empty());
  c = remove_leftovers(t.dir(), true);
  EXPECT_EQ(c.removed,
            (Lines{"instance " + parent + " (pid " + std::to_string(getppid()) + " is alive)"}));
  EXPECT_TRUE(t.has("instances/" + mine));
  EXPECT_FALSE(t.has("instances/" + parent));
  EXPECT_TRUE(t.has("instances/tracekit_x"));
}

TEST(TracefsLeftoversTest, DeadProbesAreTurnedOffThenRemoved) {
  FakeTree t;
  const std::string live = "tracekit_" + std::to_string(getppid());
  t.put("uprobe_events",
        "p:tracekit_99999999/ev1 /bin/true:0x0000000000002490\n"
        "r:tracekit_99999999/ev2 /bin/true:0x0000000000000010\n"
        "p:uprobes/other /bin/true:0x0000000000000001\n"
        "p:" +
            live + "/ev /bin/true:0x0000000000000001\n");
  t.put("events/tracekit_99999999/ev1/enable", "1\n");
  t.put("events/tracekit_99999999/ev1/trigger", kTriggerHeader + "stacktrace:unlimited\n");
  t.put("events/tracekit_99999999/ev1/filter", "common_pid == 5\n");
  t.put("events/tracekit_99999999/ev2/enable", "0\n");
  t.put("events/tracekit_99999999/ev2/trigger", kTriggerHeader);
  t.put("events/tracekit_99999999/ev2/filter", "none\n");
  auto c = remove_leftovers(t.dir());
  EXPECT_EQ(c.removed, (Lines{"probe tracekit_99999999/ev1", "probe tracekit_99999999/ev2"}));
  EXPECT_TRUE(c.failed.empty());
  const std::string e = "T/events/tracekit_99999999/ev1/";
  EXPECT_EQ(t.writes(), (Lines{
                            "write " + e + "enable 0",
                            "append " + e + "trigger !stacktrace",
                            "write " + e + "filter 0",
                            "append T/uprobe_events -:tracekit_99999999/ev1",
                            "append T/uprobe_events -:tracekit_99999999/ev2",
                        }));
  EXPECT_EQ(t.get("uprobe_events"),
            "p:tracekit_99999999/ev1 /bin/true:0x0000000000002490\n"
            "r:tracekit_99999999/ev2 /bin/true:0x0000000000000010\n"
            "p:uprobes/other /bin/true:0x0000000000000001\n"
            "p:" +
                live +
                "/ev /bin/true:0x0000000000000001\n"
                "-:tracekit_99999999/ev1\n"
                "-:tracekit_99999999/ev2\n");
}

TEST(TracefsLeftoversTest, DynamicEventsIsTheOnlyListReadWhenPresent) {
  FakeTree t;
  const std::string line = "p:tracekit_99999999_1/ev /bin/true:0x0000000000000001\n";
  t.put("dynamic_events", line);
  t.put("uprobe_events", line);  // the kernel lists uprobes in both
  auto c = remove_leftovers(t.dir());
  EXPECT_EQ(c.removed, (Lines{"probe tracekit_99999999_1/ev"}));
  EXPECT_EQ(t.get("dynamic_events"), line + "-:tracekit_99999999_1/ev\n");
  EXPECT_EQ(t.get("uprobe_events"), line);
}

TEST(TracefsLeftoversTest, KprobeAndUprobeEventsWithoutDynamicEvents) {
  FakeTree t;
  t.put("kprobe_events", "p:tracekit_99999999/p_vfs_read vfs_read\n");
  t.put("uprobe_events", "p:tracekit_99999999/main /bin/true:0x0000000000000001\n");
  auto c = remove_leftovers(t.dir());
  EXPECT_EQ(c.removed,
            (Lines{"probe tracekit_99999999/p_vfs_read", "probe tracekit_99999999/main"}));
  EXPECT_EQ(t.writes(), (Lines{"append T/kprobe_events -:tracekit_99999999/p_vfs_read",
                               "append T/uprobe_events -:tracekit_99999999/main"}));
}

TEST(TracefsLeftoversTest, InstancesGoBeforeProbes) {
  FakeTree t;
  t.mkdir("instances/tracekit_99999999_0");
  t.put("uprobe_events", "p:tracekit_99999999/main /bin/true:0x0000000000000001\n");
  auto c = remove_leftovers(t.dir());
  EXPECT_EQ(c.removed, (Lines{"instance tracekit_99999999_0", "probe tracekit_99999999/main"}));
  EXPECT_EQ(t.writes(), (Lines{"rmdir T/instances/tracekit_99999999_0",
                               "append T/uprobe_events -:tracekit_99999999/main"}));
}

TEST(TracefsResetGlobalTest, ResetsOnlyWhatIsSet) {
  FakeTree t;
  t.put("current_tracer", "function\n");
  t.put("set_ftrace_filter", "vfs_read\nvfs_write\n");
  t.put("set_ftrace_notrace", "#### no functions disabled ####\n");
  t.put("set_graph_notrace", "schedule\n");
  t.put("set_ftrace_pid", "no pid\n");
  t.put("options/stacktrace", "1\n");
  t.put("options/func_stack_trace", "0\n");
  t.put("tracing_on", "0\n");
  // What funcslower -C, funcgraph -m and funccount leave when killed.
  t.put("tracing_thresh", "10000\n");
  t.put("max_graph_depth", "0\n");
  t.put("options/sleep-time", "0\n");
  auto c = reset_global(t.dir());
  EXPECT_EQ(c.removed,
            (Lines{"tracing_thresh: 10000 -> 0", "options/stacktrace: 1 -> 0",
                   "options/sleep-time: 0 -> 1", "current_tracer: function -> nop",
                   "set_ftrace_filter: 2 entries emptied", "set_graph_notrace: 1 entry emptied"}));
  EXPECT_TRUE(c.failed.empty());
  // The options while the tracer is still current (3.10 shows a tracer's
  // own options only then), the tracer after.
  EXPECT_EQ(t.writes(), (Lines{"write T/tracing_thresh 0", "write T/options/stacktrace 0",
                               "write T/options/sleep-time 1", "write T/current_tracer nop",
                               "write T/set_ftrace_filter ", "write T/set_graph_notrace "}));
  EXPECT_EQ(t.get("tracing_on"), "0\n");  // left alone
  t.log.clear();
  c = reset_global(t.dir());  // now clean
  EXPECT_TRUE(c.removed.empty());
  EXPECT_TRUE(t.log.empty());
}

TEST(TracefsResetGlobalTest, FailureIsReported) {
  FakeTree t;
  t.put("options/userstacktrace", "1\n");
  auto c = reset_global(t.dir());
  EXPECT_EQ(c.removed, (Lines{"options/userstacktrace: 1 -> 0"}));
  fs::remove(t.dir() + "/current_tracer");
  if (geteuid() == 0) {
    // Root writes read-only files; not a read-only sysfs attribute (EACCES
    // for everyone), whose content is not "nop" either.
    fs::create_symlink("/sys/devices/system/cpu/online", t.dir() + "/current_tracer");
  } else {
    t.put("current_tracer", "function\n");
    fs::permissions(t.dir() + "/current_tracer", fs::perms::owner_read);
  }
  c = reset_global(t.dir());
  ASSERT_EQ(c.failed.size(), 1u);
  EXPECT_EQ(c.failed[0], "current_tracer: Permission denied");
}

}  // namespace
}  // namespace tracekit::tracefs
