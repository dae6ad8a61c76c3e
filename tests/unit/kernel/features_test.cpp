// The feature layer against fake tracefs trees laid out as the kernels of
// the hosts tracekit is for show them (3.10's debugfs tracing without
// triggers, 4.4's, 4.14's, and this machine's 6.18 kind), with fake perf
// answers.
#include "kernel/features.hpp"

#include <gtest/gtest.h>

#include <set>

#include "../tracefs/fake_tree.hpp"

namespace tracekit::kernel {
namespace {

using F = Feature;

// What perf_event_open accepts on a kernel that has the perf features in set.
Probe fake(const tracefs::FakeTree& t, bool tracefs_fs, std::set<F> perf,
           bool function_tracer = false, bool eprobes = false) {
  Probe p;
  std::string dir = t.dir();
  p.tracing_dir = [dir] { return dir; };
  p.tracefs_filesystem = [tracefs_fs] { return tracefs_fs; };
  p.debugfs_tracing = [] { return true; };
  p.perf_accepts = [perf](F f) { return perf.count(f) > 0; };
  p.eprobe_works = [eprobes](const std::string&) { return eprobes; };
  p.function_tracer_works = [function_tracer](const std::string&) { return function_tracer; };
  return p;
}

const char kTriggers314[] =
    "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event disable_event\n";

// RHEL 7 (3.10): debugfs tracing, instances, kprobes and uprobes, no
// triggers (3.14), no set_event_pid (4.4); perf without context_switch,
// use_clockid, sample_max_stack; mmap2 backported.
TEST(KernelFeaturesTest, Rhel7Layout) {
  tracefs::FakeTree t;
  t.put("kprobe_events", "");
  t.put("uprobe_events", "");
  t.put("available_tracers", "blk function_graph wakeup_dl wakeup_rt wakeup function nop\n");
  t.put("events/sched/sched_switch/format", "name: sched_switch\n");
  t.put("events/syscalls/sys_enter_read/format", "name: sys_enter_read\n");
  t.put("README", "  kprobe_events\t\t- Add/remove/show the kernel dynamic events\n");
  Features f(fake(t, false, {F::kPerfEvents, F::kMmap2, F::kExcludeCallchain}, true));
  EXPECT_FALSE(f.has(F::kTracefs));
  EXPECT_TRUE(f.has(F::kDebugfsTracing));
  EXPECT_TRUE(f.has(F::kEventTracing));
  EXPECT_TRUE(f.has(F::kInstances));
  EXPECT_FALSE(f.has(F::kEventTriggers));
  EXPECT_FALSE(f.has(F::kStacktraceTrigger));
  EXPECT_TRUE(f.has(F::kKprobes));
  EXPECT_TRUE(f.has(F::kUprobes));
  EXPECT_FALSE(f.has(F::kDynamicEvents));
  EXPECT_FALSE(f.has(F::kErrorLog));
  EXPECT_FALSE(f.has(F::kSetEventPid));
  EXPECT_TRUE(f.has(F::kFunctionTracer));
  EXPECT_TRUE(f.has(F::kFunctionGraph));
  EXPECT_FALSE(f.has(F::kFunctionProfiler));
  EXPECT_TRUE(f.has(F::kSyscallTracepoints));
  EXPECT_FALSE(f.has(F::kKprobeArgN));
  EXPECT_FALSE(f.has(F::kUstring));
  EXPECT_FALSE(f.has(F::kUprobeFetchArgs));  // 3.10: before them (3.14)
  EXPECT_FALSE(f.has(F::kContextSwitch));
  EXPECT_FALSE(f.has(F::kUseClockid));
  EXPECT_FALSE(f.has(F::kSampleMaxStack));
  EXPECT_TRUE(f.has(F::kMmap2));
  auto e = f.missing(F::kContextSwitch);
  EXPECT_EQ(e.message, "this kernel has no perf context-switch records (PERF_RECORD_SWITCH)");
  EXPECT_EQ(e.hint, "Linux 4.3 brings it");
}

// Ubuntu 16.04 (4.4): tracefs, triggers with hist off, set_event_pid, no
// event-fork (4.7), no dynamic_events, error_log or buffer_percent.
TEST(KernelFeaturesTest, Ubuntu1604Layout) {
  tracefs::FakeTree t;
  t.mkdir("instances");
  t.put("kprobe_events", "");
  t.put("uprobe_events", "");
  t.put("set_event_pid", "");
  t.put("events/sched/sched_switch/trigger", kTriggers314);
  t.put("available_tracers", "function_graph function nop\n");
  t.put("function_profile_enabled", "0\n");
  Features f(fake(t, true, {F::kPerfEvents, F::kMmap2, F::kExcludeCallchain, F::kCommExec,
                            F::kUseClockid, F::kContextSwitch},
                  true));
  EXPECT_TRUE(f.has(F::kTracefs));
  EXPECT_TRUE(f.has(F::kEventTriggers));
  EXPECT_TRUE(f.has(F::kStacktraceTrigger));
  EXPECT_FALSE(f.has(F::kHistTriggers));
  EXPECT_TRUE(f.has(F::kSetEventPid));
  EXPECT_FALSE(f.has(F::kEventFork));
  EXPECT_TRUE(f.has(F::kFunctionProfiler));
  EXPECT_FALSE(f.has(F::kSyscallTracepoints));
  EXPECT_TRUE(f.has(F::kContextSwitch));
  EXPECT_FALSE(f.has(F::kSampleMaxStack));
  EXPECT_FALSE(f.has(F::kPerfEventMaxStack));
}

// Amazon Linux 2 (4.14): hist triggers, event-fork, sample_max_stack; still
// no dynamic_events (5.0), no $argN (4.20).
TEST(KernelFeaturesTest, AmazonLinux2Layout) {
  tracefs::FakeTree t;
  t.mkdir("instances");
  t.put("kprobe_events", "");
  t.put("uprobe_events", "");
  t.put("set_event_pid", "");
  t.put("options/event-fork", "0\n");
  t.put("events/sched/sched_switch/trigger",
        "# Available triggers:\n# traceon traceoff snapshot stacktrace enable_event "
        "disable_event enable_hist disable_hist hist\n");
  t.put("README", "\t  fetcharg:\t%<register>, @<address>, @<symbol>[+|-<offset>],\n");
  Features f(fake(t, true, {F::kPerfEvents, F::kSampleMaxStack, F::kPerfEventMaxStack}));
  EXPECT_TRUE(f.has(F::kHistTriggers));
  EXPECT_TRUE(f.has(F::kEventFork));
  EXPECT_FALSE(f.has(F::kDynamicEvents));
  EXPECT_FALSE(f.has(F::kKprobeArgN));
  EXPECT_FALSE(f.has(F::kFunctionTracer));
  EXPECT_FALSE(f.has(F::kFunctionGraph));  // needs a usable function tracer
  EXPECT_TRUE(f.has(F::kSampleMaxStack));
}

// This machine's kind: 6.18 under lockdown, no kprobes; README lists e:
// and $arg<N> for kprobes, but without kprobe_events neither counts; an
// eprobe counts only when one could be created.
TEST(KernelFeaturesTest, CurrentLockedDownLayout) {
  tracefs::FakeTree t;
  t.mkdir("instances");
  t.put("uprobe_events", "");
  t.put("dynamic_events", "");
  t.put("error_log", "");
  t.put("buffer_percent", "50\n");
  t.put("README",
        "\t  e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>]\n"
        "\t fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],\n"
        "\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n"
        "\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n");
  t.put("events/sched/sched_switch/trigger", kTriggers314);
  Features f(fake(t, true, {F::kPerfEvents}, false, false));
  EXPECT_FALSE(f.has(F::kKprobes));
  EXPECT_FALSE(f.has(F::kKprobeArgN));
  EXPECT_TRUE(f.has(F::kUstring));
  EXPECT_TRUE(f.has(F::kUprobeFetchArgs));
  EXPECT_TRUE(f.has(F::kDynamicEvents));
  EXPECT_FALSE(f.has(F::kEprobes));
  EXPECT_TRUE(f.has(F::kErrorLog));
  EXPECT_TRUE(f.has(F::kBufferPercent));
  Features with_eprobes(fake(t, true, {}, false, true));
  EXPECT_TRUE(with_eprobes.has(F::kEprobes));
}

TEST(KernelFeaturesTest, NoTracingDirectoryMeansNoTracefsFeature) {
  Probe p;
  p.tracing_dir = [] { return std::string(); };
  p.tracefs_filesystem = [] { return false; };
  p.debugfs_tracing = [] { return false; };
  p.perf_accepts = [](F) { return true; };
  Features f(p);
  EXPECT_FALSE(f.has(F::kEventTracing));
  EXPECT_FALSE(f.has(F::kInstances));
  EXPECT_FALSE(f.has(F::kUprobes));
  EXPECT_TRUE(f.has(F::kContextSwitch));
}

TEST(KernelFeaturesTest, ForcedOffWhateverTheHostHasAndSaysWho) {
  tracefs::FakeTree t;
  t.mkdir("instances");
  int asked = 0;
  Probe p = fake(t, true, {F::kContextSwitch});
  p.perf_accepts = [&asked](F f) { return ++asked, f == F::kContextSwitch; };
  Features f(p, {F::kInstances, F::kContextSwitch});
  EXPECT_EQ(f.state(F::kInstances), State::kForcedOff);
  EXPECT_FALSE(f.has(F::kContextSwitch));
  EXPECT_EQ(asked, 0);  // forced features are never probed
  auto e = f.missing(F::kInstances);
  EXPECT_EQ(e.message, "tracefs instances (private trace buffers) turned off by "
                       "TRACEKIT_KERNEL_FEATURES");
  EXPECT_EQ(f.state(F::kEventTriggers), State::kAbsent);
}

TEST(KernelFeaturesTest, ProbedOncePerRun) {
  tracefs::FakeTree t;
  int asked = 0;
  Probe p = fake(t, true, {});
  p.perf_accepts = [&asked](F) { return ++asked, true; };
  Features f(p);
  EXPECT_TRUE(f.has(F::kMmap2));
  EXPECT_TRUE(f.has(F::kMmap2));
  EXPECT_EQ(asked, 1);
}

}  // namespace
}  // namespace tracekit::kernel
