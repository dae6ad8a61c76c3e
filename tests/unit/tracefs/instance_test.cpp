// Instance against a fake tracefs tree (a temp directory whose control files
// the test creates), with every write recorded: the order of the undo steps,
// their text, and the pure parsers (trigger removal, error_log, stats).
#include "tracefs/instance.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "fake_tree.hpp"

namespace tracekit::tracefs {
namespace {

namespace fs = std::filesystem;

using Lines = std::vector<std::string>;

TEST(TracefsInstanceTest, CreateNamesAfterPidAndCounts) {
  FakeTree t;
  std::string prefix = "tracekit_" + std::to_string(getpid()) + "_";
  std::string first, second;
  {
    auto a = Instance::create(t.dir());
    ASSERT_TRUE(a) << a.error().str();
    auto b = Instance::create(t.dir());
    ASSERT_TRUE(b) << b.error().str();
    first = a->name();
    second = b->name();
    ASSERT_EQ(first.rfind(prefix, 0), 0u) << first;
    ASSERT_EQ(second.rfind(prefix, 0), 0u) << second;
    int na = std::stoi(first.substr(prefix.size()));
    int nb = std::stoi(second.substr(prefix.size()));
    EXPECT_EQ(nb, na + 1);
    EXPECT_EQ(a->path(), t.dir() + "/instances/" + first);
    EXPECT_EQ(a->tracing_dir(), t.dir());
    EXPECT_TRUE(fs::is_directory(a->path()));
  }
  // Empty directories: the rmdir succeeds, newest first.
  EXPECT_FALSE(fs::exists(t.dir() + "/instances/" + first));
  EXPECT_FALSE(fs::exists(t.dir() + "/instances/" + second));
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/instances/" + first, "mkdir T/instances/" + second,
                               "rmdir T/instances/" + second, "rmdir T/instances/" + first}));
}

TEST(TracefsInstanceTest, CreateSkipsNamesThatExist) {
  FakeTree t;
  std::string prefix = "tracekit_" + std::to_string(getpid()) + "_";
  auto a = Instance::create(t.dir());
  ASSERT_TRUE(a);
  int n = std::stoi(a->name().substr(prefix.size()));
  // A dead run with our pid left the next two names.
  fs::create_directory(t.dir() + "/instances/" + prefix + std::to_string(n + 1));
  fs::create_directory(t.dir() + "/instances/" + prefix + std::to_string(n + 2));
  auto b = Instance::create(t.dir());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name(), prefix + std::to_string(n + 3));
}

TEST(TracefsInstanceTest, CreateWithoutInstancesDirFails) {
  FakeTree t;
  auto r = Instance::create(t.dir() + "/nonexistent");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_NE(r.error().hint.find("kernel is too old"), std::string::npos) << r.error().str();
}

// The files of sched_switch and the instance-wide ones the test touches,
// as the kernel shows them when nothing is set.
void put_instance_files(const FakeTree& t, const std::string& rel) {
  t.put(rel + "/events/sched/sched_switch/enable", "0\n");
  t.put(rel + "/events/sched/sched_switch/filter", "none\n");
  t.put(rel + "/events/sched/sched_switch/trigger",
        "# Available triggers:\n# traceon traceoff stacktrace enable_event disable_event\n");
  t.put(rel + "/options/stacktrace", "0\n");
  t.put(rel + "/options/func_stack_trace", "0\n");
  t.put(rel + "/tracing_on", "1\n");
  t.put(rel + "/buffer_size_kb", "1408\n");
  t.put(rel + "/current_tracer", "nop\n");
  t.put(rel + "/set_ftrace_filter", "#### all functions enabled ####\n");
}

TEST(TracefsInstanceTest, UndoesInReverseOrderThenRemovesTheDirectory) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    Instance& i = *r;
    rel = "instances/" + i.name();
    put_instance_files(t, rel);
    ASSERT_TRUE(i.set_filter("sched", "sched_switch", "prev_pid == 1"));
    ASSERT_TRUE(i.add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1"));
    ASSERT_TRUE(i.enable_event("sched", "sched_switch"));
    ASSERT_TRUE(i.set_option("stacktrace", true));
    ASSERT_TRUE(i.set_buffer_size_kb(4096));
    ASSERT_TRUE(i.set_tracing_on(false));
    EXPECT_EQ(t.get(rel + "/events/sched/sched_switch/filter"), "prev_pid == 1\n");
    EXPECT_EQ(t.get(rel + "/events/sched/sched_switch/enable"), "1\n");
    EXPECT_EQ(t.get(rel + "/tracing_on"), "0\n");
    EXPECT_EQ(t.get(rel + "/buffer_size_kb"), "4096\n");
  }
  std::string err = testing::internal::GetCapturedStderr();
  const std::string e = "T/" + rel + "/events/sched/sched_switch/";
  EXPECT_EQ(t.writes(), (Lines{
                            "mkdir T/" + rel,
                            "write " + e + "filter prev_pid == 1",
                            "append " + e + "trigger stacktrace if common_pid == 1",
                            "write " + e + "enable 1",
                            "write T/" + rel + "/options/stacktrace 1",
                            "write T/" + rel + "/buffer_size_kb 4096",
                            "write T/" + rel + "/tracing_on 0",
                            // the undo, newest first
                            "write T/" + rel + "/tracing_on 1",
                            "write T/" + rel + "/options/stacktrace 0",
                            "write " + e + "enable 0",
                            "append " + e + "trigger !stacktrace",
                            "write " + e + "filter 0",
                            "rmdir T/" + rel,
                        }));
  // A trigger is removed by appending, never by truncating the file.
  EXPECT_EQ(t.get(rel + "/events/sched/sched_switch/trigger"),
            "# Available triggers:\n# traceon traceoff stacktrace enable_event disable_event\n"
            "stacktrace if common_pid == 1\n!stacktrace\n");
  EXPECT_EQ(t.get(rel + "/events/sched/sched_switch/filter"), "0\n");
  EXPECT_EQ(t.get(rel + "/events/sched/sched_switch/enable"), "0\n");
  EXPECT_EQ(t.get(rel + "/options/stacktrace"), "0\n");
  EXPECT_EQ(t.get(rel + "/tracing_on"), "1\n");
  // The fake tree is a normal directory: rmdir of a non-empty one fails, and
  // says so with our prefix.
  EXPECT_NE(err.find("tracekit: cleanup: cannot remove tracefs instance: " + t.dir() + "/" + rel +
                     ": Directory not empty"),
            std::string::npos)
      << err;
}

// Without instances: the top level, under the lock, every setting restored
// (the buffer size too), its buffer emptied at both ends, nothing removed.
TEST(TracefsInstanceTest, TopLevelRestoresEverythingUnderTheLock) {
  FakeTree t;
  put_instance_files(t, ".");
  t.put("trace", "someone else's records\n");
  t.put("buffer_size_kb", "7 (expanded: 1408)\n");
  const std::string lock = t.dir() + "/ftrace-lock";
  {
    auto r = Instance::top_level(t.dir(), lock);
    ASSERT_TRUE(r) << r.error().str();
    Instance& i = *r;
    EXPECT_TRUE(i.is_top_level());
    EXPECT_EQ(i.path(), t.dir());
    EXPECT_EQ(t.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    // A second user is refused while the lock is held.
    auto second = Instance::top_level(t.dir(), lock);
    ASSERT_FALSE(second);
    EXPECT_EQ(second.error().err, EBUSY);
    ASSERT_TRUE(i.enable_event("sched", "sched_switch"));
    ASSERT_TRUE(i.set_option("stacktrace", true));
    ASSERT_TRUE(i.set_buffer_size_kb(4096));
  }
  const std::string e = "T/events/sched/sched_switch/";
  EXPECT_EQ(t.writes(), (Lines{
                            "write T/trace ",
                            "write " + e + "enable 1",
                            "write T/options/stacktrace 1",
                            "write T/buffer_size_kb 4096",
                            "write T/buffer_size_kb 1408",
                            "write T/options/stacktrace 0",
                            "write " + e + "enable 0",
                            "write T/trace ",
                        }));
  EXPECT_FALSE(t.has("ftrace-lock"));
  EXPECT_TRUE(t.has("events"));
}

// A run killed at the top level leaves its undo steps in a journal; the next
// holder of the lock replays them, newest first, and removes it.
TEST(TracefsInstanceTest, JournalOfAKilledRunIsReplayed) {
  FakeTree t;
  put_instance_files(t, ".");
  const std::string journal = t.dir() + "/journal";
  {
    UndoLog log(t.dir(), {});
    ASSERT_TRUE(log.keep_journal(journal));
    ASSERT_TRUE(log.set("options/stacktrace", "1"));
    ASSERT_TRUE(log.change("events/sched/sched_switch/trigger", "stacktrace if prev_pid == 1",
                           true, "!stacktrace", true));
    ASSERT_TRUE(log.change("events/sched/sched_switch/filter", "prev_pid == 1", false, "0", false));
    // Killed here: the log is never undone.
  }
  EXPECT_EQ(t.get("options/stacktrace"), "1\n");
  t.log.clear();
  EXPECT_EQ(replay_journal(journal, t.dir()), 3u);
  const std::string e = "T/events/sched/sched_switch/";
  EXPECT_EQ(t.writes(), (Lines{"write " + e + "filter 0", "append " + e + "trigger !stacktrace",
                               "write T/options/stacktrace 0"}));
  EXPECT_FALSE(t.has("journal"));
  EXPECT_EQ(replay_journal(journal, t.dir()), 0u);
}

TEST(TracefsInstanceTest, NothingIsUndoneForAFailedStep) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    put_instance_files(t, rel);
    // A directory where the trigger file should be: the write fails (EISDIR).
    fs::remove(t.dir() + "/" + rel + "/events/sched/sched_switch/trigger");
    fs::create_directory(t.dir() + "/" + rel + "/events/sched/sched_switch/trigger");
    auto s = r->add_trigger("sched", "sched_switch", "stacktrace");
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().err, EISDIR);
    EXPECT_EQ(s.error().path, t.dir() + "/" + rel + "/events/sched/sched_switch/trigger");
    auto u = r->enable_event("sched", "no_such_event");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().err, ENOENT);
    EXPECT_EQ(u.error().message, "no such event sched:no_such_event");
    EXPECT_NE(u.error().hint.find("available_events"), std::string::npos);
    auto o = r->set_option("no_such_option", true);
    ASSERT_FALSE(o);
    EXPECT_EQ(o.error().message, "no such trace option no_such_option");
  }
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/" + rel,
                               "append T/" + rel + "/events/sched/sched_switch/trigger stacktrace",
                               "rmdir T/" + rel}));
}

TEST(TracefsInstanceTest, FunctionTracerStepsAndUndo) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    put_instance_files(t, rel);
    auto none = r->start_function_tracer({}, true);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().err, EINVAL);
    ASSERT_TRUE(r->start_function_tracer({"vfs_read", "vfs_write"}, true));
    EXPECT_EQ(t.get(rel + "/set_ftrace_filter"), "vfs_read vfs_write\n");
    EXPECT_EQ(t.get(rel + "/current_tracer"), "function\n");
  }
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.writes(),
            (Lines{"mkdir T/" + rel, "write T/" + rel + "/set_ftrace_filter vfs_read vfs_write",
                   // The tracer before its option (before Linux 5.12 an
                   // instance's tracer ignores the option set before it),
                   // tracing off in between.
                   "write T/" + rel + "/tracing_on 0",
                   "write T/" + rel + "/current_tracer function",
                   "write T/" + rel + "/options/func_stack_trace 1",
                   "write T/" + rel + "/tracing_on 1",
                   "write T/" + rel + "/tracing_on 0",
                   "write T/" + rel + "/options/func_stack_trace 0",
                   "write T/" + rel + "/current_tracer nop",
                   "write T/" + rel + "/tracing_on 1",
                   "write T/" + rel + "/set_ftrace_filter ", "rmdir T/" + rel}));
  EXPECT_EQ(t.get(rel + "/set_ftrace_filter"), "");  // truncated
}

// func_stack_trace is one option for every instance: on already (another
// run's), it is switched off and on again once the tracer runs, so that
// the kernel applies it to this instance, and left on at the end.
TEST(TracefsInstanceTest, FunctionTracerStackOptionAlreadyOn) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    put_instance_files(t, rel);
    t.put(rel + "/options/func_stack_trace", "1\n");
    ASSERT_TRUE(r->start_function_tracer({"vfs_read"}, true));
    EXPECT_EQ(t.get(rel + "/options/func_stack_trace"), "1\n");
  }
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(t.writes(),
            (Lines{"mkdir T/" + rel, "write T/" + rel + "/set_ftrace_filter vfs_read",
                   "write T/" + rel + "/tracing_on 0",
                   "write T/" + rel + "/current_tracer function",
                   "write T/" + rel + "/options/func_stack_trace 0",
                   "write T/" + rel + "/options/func_stack_trace 1",
                   "write T/" + rel + "/tracing_on 1",
                   "write T/" + rel + "/tracing_on 0",
                   "write T/" + rel + "/options/func_stack_trace 0",
                   "write T/" + rel + "/options/func_stack_trace 1",
                   "write T/" + rel + "/current_tracer nop",
                   "write T/" + rel + "/tracing_on 1",
                   "write T/" + rel + "/set_ftrace_filter ", "rmdir T/" + rel}));
}

TEST(TracefsInstanceTest, FunctionTracerRefusedSaysWhy) {
  FakeTree t;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    // No set_ftrace_filter file: a kernel without the function tracer.
    auto s = r->start_function_tracer({"vfs_read"}, false);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().err, ENOENT);
    EXPECT_EQ(s.error().message.rfind("this kernel has no function tracer", 0), 0u)
        << s.error().str();
    EXPECT_NE(s.error().hint.find("CONFIG_FUNCTION_TRACER"), std::string::npos);
  }
  testing::internal::GetCapturedStderr();
}

TEST(TracefsInstanceTest, MovedFromInstanceDoesNothing) {
  FakeTree t;
  std::string name;
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    Instance moved(std::move(*r));
    name = moved.name();
  }
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/instances/" + name, "rmdir T/instances/" + name}));
}

TEST(TracefsInstanceTest, GenericSetterRestoresTheValueBefore) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    t.put(rel + "/trace_clock", "[local] global counter uptime perf mono mono_raw boot\n");
    t.put(rel + "/buffer_percent", "50\n");
    t.put(rel + "/tracing_cpumask", "3\n");
    ASSERT_TRUE(r->set("trace_clock", "mono"));
    ASSERT_TRUE(r->set("buffer_percent", "0"));
    ASSERT_TRUE(r->set("tracing_cpumask", "2"));
    auto back = r->read("tracing_cpumask");
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, "2\n");
    auto missing = r->set("nope", "1");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().err, ENOENT);
    EXPECT_EQ(missing.error().str(), "no such control file: " + t.dir() + "/" + rel +
                                         "/nope: No such file or directory");
    EXPECT_FALSE(r->read("nope"));
  }
  testing::internal::GetCapturedStderr();  // the rmdir of a non-empty fake dir fails
  const std::string i = "T/" + rel + "/";
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/" + rel, "write " + i + "trace_clock mono",
                               "write " + i + "buffer_percent 0", "write " + i + "tracing_cpumask 2",
                               // the undo, newest first: the values before
                               "write " + i + "tracing_cpumask 3", "write " + i + "buffer_percent 50",
                               "write " + i + "trace_clock local", "rmdir T/" + rel}));
}

TEST(TracefsInstanceTest, CurrentValueOfAControlFile) {
  EXPECT_EQ(current_value("[local] global counter\n"), "local");
  EXPECT_EQ(current_value("local [global] counter\n"), "global");
  EXPECT_EQ(current_value("nop\n"), "nop");
  EXPECT_EQ(current_value("  1\n"), "1");
  EXPECT_EQ(current_value(""), "");
  EXPECT_EQ(current_value("7 (expanded: 1408)\n"), "1408");
}

TEST(TracefsInstanceTest, GraphTracerStepsAndUndo) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    put_instance_files(t, rel);
    t.put(rel + "/set_graph_function", "#### all functions enabled ####\n");
    t.put(rel + "/set_ftrace_pid", "no pid\n");
    auto none = r->set_graph_function({});
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().err, EINVAL);
    ASSERT_TRUE(r->set_graph_function({"do_sys_openat2"}));
    ASSERT_TRUE(r->set_ftrace_pid({42}));
    ASSERT_TRUE(r->add_pids(Instance::PidList::kFunctions, {43}));
    ASSERT_TRUE(r->set_tracer("function_graph"));
    EXPECT_EQ(t.get(rel + "/current_tracer"), "function_graph\n");
    EXPECT_EQ(t.get(rel + "/set_ftrace_pid"), "42\n43\n");
  }
  testing::internal::GetCapturedStderr();
  const std::string i = "T/" + rel + "/";
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/" + rel, "write " + i + "set_graph_function do_sys_openat2",
                               "write " + i + "set_ftrace_pid 42", "append " + i + "set_ftrace_pid 43",
                               "write " + i + "current_tracer function_graph",
                               "write " + i + "current_tracer nop", "write " + i + "set_ftrace_pid ",
                               "write " + i + "set_graph_function ", "rmdir T/" + rel}));
}

TEST(TracefsInstanceTest, GraphTracerMissingNamesItsConfigOption) {
  FakeTree t;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    put_instance_files(t, "instances/" + r->name());  // set_ftrace_filter, no set_graph_function
    auto s = r->set_graph_function({"vfs_read"});
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().err, ENOENT);
    EXPECT_EQ(s.error().message, "this kernel has no function_graph tracer");
    EXPECT_NE(s.error().hint.find("CONFIG_FUNCTION_GRAPH_TRACER"), std::string::npos);
  }
  testing::internal::GetCapturedStderr();
}

TEST(TracefsInstanceTest, DroppedEventsFromStats) {
  FakeTree t;
  auto r = Instance::create(t.dir());
  ASSERT_TRUE(r);
  const std::string rel = "instances/" + r->name();
  t.put(rel + "/per_cpu/cpu1/stats",
        "entries: 10\noverrun: 0\ncommit overrun: 0\nbytes: 480\n"
        "oldest event ts:  2608.012669\nnow ts:  2608.012669\ndropped events: 42\n"
        "read events: 3\n");
  t.put(rel + "/per_cpu/cpu0/stats", "entries: 0\n");
  auto d = r->dropped_events(1);
  ASSERT_TRUE(d) << d.error().str();
  EXPECT_EQ(*d, 42u);
  auto bad = r->dropped_events(0);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().str().find("dropped events"), std::string::npos);
  EXPECT_FALSE(r->dropped_events(7));
  fs::remove_all(r->path() + "/per_cpu");
}

TEST(TracefsParseDroppedEventsTest, Table) {
  struct Case {
    const char* text;
    std::optional<uint64_t> want;
  } cases[] = {
      {"dropped events: 0\n", 0},
      {"entries: 1\ndropped events: 17\nread events: 2\n", 17},
      {"dropped events:\t18446744073709551615", UINT64_MAX},
      {"entries: 1\n", std::nullopt},
      {"dropped events: x\n", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_dropped_events(c.text), c.want) << c.text;
}

TEST(TracefsTriggerRemovalTest, Table) {
  struct Case {
    const char* line;
    const char* want;
  } cases[] = {
      {"stacktrace", "!stacktrace"},
      {"stacktrace if common_pid == 1", "!stacktrace"},
      {"stacktrace:unlimited if common_pid == 5", "!stacktrace"},
      {"stacktrace:count=3 if common_pid == 1", "!stacktrace"},
      {"stacktrace:5 if prev_pid == 2", "!stacktrace"},
      {"traceoff:unlimited if prev_pid == 99", "!traceoff"},
      {"traceon:count=2", "!traceon"},
      {"snapshot:unlimited", "!snapshot"},
      {"enable_event:sched:sched_wakeup:count=1", "!enable_event:sched:sched_wakeup"},
      {"disable_event:tracekit_12:ev:unlimited if common_pid == 3",
       "!disable_event:tracekit_12:ev"},
      {"enable_event:sched:sched_wakeup:2", "!enable_event:sched:sched_wakeup"},
      {"hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048 [active]",
       "!hist:keys=common_pid:vals=hitcount:sort=hitcount:size=2048"},
      {"hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 if prev_pid == 1 [paused]",
       "!hist:keys=pid:vals=hitcount:sort=hitcount:size=2048"},
      {"  stacktrace:unlimited  \n", "!stacktrace"},
      {"# Available triggers:", ""},
      {"# traceon traceoff stacktrace enable_event disable_event", ""},
      {"", ""},
      {"   ", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(trigger_removal(c.line), c.want) << c.line;
}

TEST(TracefsErrorLogTest, LastEntry) {
  const char* two =
      "[ 2586.222139] event filter parse error: error: Field not found\n"
      "  Command: bogus_field == 1\n"
      "                       ^\n"
      "[ 2597.614003] trace_uprobe: error: There is already the exact same probe event\n"
      "  Command: p:tkexpg/ev1 /bin/true:0x2490\n"
      "           ^\n";
  EXPECT_EQ(parse_last_error_log(two),
            "trace_uprobe: error: There is already the exact same probe event "
            "(command: p:tkexpg/ev1 /bin/true:0x2490)");
  EXPECT_EQ(parse_last_error_log("[ 1.0] x: error: y\n"), "x: error: y");
  EXPECT_EQ(parse_last_error_log(""), "");
  EXPECT_EQ(parse_last_error_log("garbage\n"), "");
}

TEST(TracefsErrorLogTest, StaleEntryIsNotBlamed) {
  FakeTree t;
  t.put("error_log", "[ 1.0] trace_kprobe: error: old\n  Command: p:x\n    ^\n");
  EXPECT_EQ(last_error_log(t.dir()), "trace_kprobe: error: old (command: p:x)");
  // The write fails, but error_log did not change: no hint from it.
  auto s = write_control(t.dir() + "/missing", "1", false, {t.dir()});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().hint, "");
  EXPECT_EQ(last_error_log(t.dir() + "/instances"), "");
}

}  // namespace
}  // namespace tracekit::tracefs
