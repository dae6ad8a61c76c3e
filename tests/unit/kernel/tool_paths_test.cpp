// The tool table against fake hosts: the first way whose features are all
// there is taken; otherwise the way closest to working names what is missing.
#include "kernel/tool_paths.hpp"

#include "session/tool_table.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "../tracefs/fake_tree.hpp"

namespace tracekit::kernel {
namespace {

using F = Feature;

// A host with exactly the features in have (every probe answered from it).
Features host_with(std::set<F> have) {
  Probe p;
  p.tracing_dir = [] { return std::string(); };
  p.tracefs_filesystem = [have] { return have.count(F::kTracefs) > 0; };
  p.debugfs_tracing = [have] { return have.count(F::kDebugfsTracing) > 0; };
  p.perf_accepts = [have](F f) { return have.count(f) > 0; };
  return Features(p);
}

const ToolUse& use(std::string_view tool, std::string_view option) {
  for (const auto& u : session::tool_uses())
    if (u.tool == tool && u.option == option) return u;
  ADD_FAILURE() << "no row " << tool << " " << option;
  return session::tool_uses().front();
}

TEST(ToolPathsTest, PreferredWayFirstThenFallbacks) {
  auto modern = host_with({F::kPerfEvents, F::kExcludeCallchain});
  auto v = judge(use("profile", "-U / -K"), modern);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "perf callchains of one side");
  auto old = host_with({F::kPerfEvents});
  v = judge(use("profile", "-U / -K"), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "perf callchains of both sides, one dropped");
}

TEST(ToolPathsTest, NothingWorksNamesTheClosestWaysLack) {
  auto none = host_with({});
  // Tracefs-less fake host: kprobe's last way (the top level) lacks only
  // kprobes, the others instances and dynamic_events too.
  auto v = judge(use("kprobe", ""), none);
  EXPECT_FALSE(v.way);
  EXPECT_EQ(v.missing, (std::vector<F>{F::kKprobes}));
  auto t = judge(use("tpoint", ""), none);
  EXPECT_FALSE(t.way);
  EXPECT_EQ(t.missing, (std::vector<F>{F::kEventTracing}));
  auto perfless = judge(use("profile", ""), none);
  EXPECT_EQ(perfless.missing, (std::vector<F>{F::kPerfEvents}));
}

// A kernel without instances traces at the top level; one without
// context-switch records (before 4.3) takes switch-ins from sched_switch,
// and one without use_clockid (before 4.1) orders on perf's clock.
TEST(ToolPathsTest, OldKernelFallbacks) {
  tracefs::FakeTree t;
  std::filesystem::remove(t.dir() + "/instances");
  t.put("kprobe_events", "");
  t.put("events/sched/sched_switch/trigger", "# Available triggers:\n# traceon stacktrace\n");
  Probe p;
  p.tracing_dir = [d = t.dir()] { return d; };
  p.tracefs_filesystem = [] { return false; };
  p.debugfs_tracing = [] { return true; };
  p.perf_accepts = [](F f) { return f == F::kPerfEvents; };
  Features old(p);
  auto v = judge(use("stackcount", "tracepoints"), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "stacktrace triggers at the top level (perf-tools' lock)");
  v = judge(use("kprobe", ""), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "kprobes (kprobe_events) at the top level (perf-tools' lock)");
  v = judge(use("offcputime", ""), old);
  ASSERT_TRUE(v.way);
  EXPECT_NE(v.way->path.find("next_pid"), std::string_view::npos);
  v = judge(use("offcputime", "event order"), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "perf's own clock, read from the records");
}

// The features of a fake tree with everything but the function tracer
// (eprobes work where the tree says so), less those forced off.
Features fake_host(const tracefs::FakeTree& t, std::vector<F> off) {
  Probe p;
  std::string dir = t.dir();
  p.tracing_dir = [dir] { return dir; };
  p.tracefs_filesystem = [] { return true; };
  p.debugfs_tracing = [] { return true; };
  p.perf_accepts = [](F) { return true; };
  p.eprobe_works = [](const std::string&) { return true; };
  p.function_tracer_works = [](const std::string&) { return false; };
  return Features(p, off);
}

// opensnoop's file names: kprobes, else eprobes, else uprobes on libc; a
// fake tree with all three, features forced off one by one.
TEST(ToolPathsTest, OpensnoopStringsByTheBestPath) {
  tracefs::FakeTree t;
  t.put("kprobe_events", "");
  t.put("uprobe_events", "");
  t.put("dynamic_events", "");
  t.put("events/syscalls/sys_exit_openat/format", "name: sys_exit_openat\n");
  auto host = [&](std::vector<F> off) { return fake_host(t, off); };
  const auto& u = use("opensnoop", "");
  auto all = host({});
  auto v = judge(u, all);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path.substr(0, 24), "file names by kprobes on");
  auto no_kprobes = host({F::kKprobes});
  v = judge(u, no_kprobes);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path.substr(0, 24), "file names by eprobes on");
  auto here = host({F::kKprobes, F::kEprobes});
  v = judge(u, here);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path.substr(0, 24), "file names by uprobes on");
  auto none = host({F::kKprobes, F::kEprobes, F::kUprobes});
  v = judge(u, none);
  EXPECT_FALSE(v.way);
  EXPECT_EQ(v.missing, (std::vector<F>{F::kKprobes}));
}

// killsnoop: the syscall tracepoints, with -p in the kernel, else
// raw_syscalls with -p checked in user space.
TEST(ToolPathsTest, KillsnoopTargetFilterInTheKernelWithTracepoints) {
  tracefs::FakeTree t;
  t.put("events/syscalls/sys_exit_kill/format", "name: sys_exit_kill\n");
  t.put("events/raw_syscalls/sys_exit/format", "name: sys_exit\n");
  auto host = [&](std::vector<F> off) { return fake_host(t, off); };
  auto all = host({});
  auto v = judge(use("killsnoop", "-p PID"), all);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "a kernel filter on the sys_enter tracepoints' target");
  v = judge(use("killsnoop", ""), all);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path.substr(0, 21), "sys_enter/sys_exit tr");
  auto raw = host({F::kSyscallTracepoints});
  v = judge(use("killsnoop", "-p PID"), raw);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "checked in user space (raw_syscalls' args cannot be filtered)");
  v = judge(use("killsnoop", ""), raw);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "raw_syscalls with an id filter, the arguments from args[]");
}

TEST(ToolPathsTest, EveryRowHasAWayAndEveryWayAPath) {
  for (const auto& u : session::tool_uses()) {
    EXPECT_FALSE(u.tool.empty());
    ASSERT_FALSE(u.ways.empty()) << u.tool << " " << u.option;
    for (const auto& w : u.ways) EXPECT_FALSE(w.path.empty()) << u.tool << " " << u.option;
  }
}

// Instances without options of their own (Linux 3.10 to 4.3, measured on
// 3.10.108): stacks by the stacktrace option and the function tracer take
// the top level; with them (4.4 on), the private instance.
TEST(ToolPathsTest, InstancesWithoutOptionsTraceStacksAtTheTopLevel) {
  tracefs::FakeTree t;
  t.put("kprobe_events", "");
  t.mkdir("instances");
  t.put("events/sched/sched_switch/format", "name: sched_switch\n");
  auto with = [&](bool options) {
    Probe p;
    std::string dir = t.dir();
    p.tracing_dir = [dir] { return dir; };
    p.tracefs_filesystem = [] { return false; };
    p.debugfs_tracing = [] { return true; };
    p.perf_accepts = [](F) { return true; };
    p.eprobe_works = [](const std::string&) { return false; };
    p.function_tracer_works = [](const std::string&) { return true; };
    p.instance_options = [options](const std::string&) { return options; };
    return Features(p, {});
  };
  auto old = with(false);
  EXPECT_FALSE(old.has(F::kInstanceOptions));
  auto v = judge(use("stackcount", "tracepoints"), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "the top level's stacktrace option (perf-tools' lock)");
  v = judge(use("stackcount", "kernel functions"), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "kprobes at the top level (perf-tools' lock)");
  v = judge(use("functrace", ""), old);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "the function tracer at the top level (perf-tools' lock)");
  auto newer = with(true);
  v = judge(use("stackcount", "kernel functions"), newer);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "kprobes with the instance's stacktrace option (kretprobes: stacktrace triggers)");
  v = judge(use("functrace", ""), newer);
  ASSERT_TRUE(v.way);
  EXPECT_EQ(v.way->path, "the function tracer in a private instance");
}

}  // namespace
}  // namespace tracekit::kernel
