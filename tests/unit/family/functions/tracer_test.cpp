// functrace/funcgraph/funcslower's engine: the lines kept of the kernel's
// text, perf-tools' header line, the options, and the tracer's set-up and
// undo against a fake tracefs tree.
#include "family/functions/tracer.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "../../tracefs/fake_tree.hpp"
#include "util/proc.hpp"

namespace tracekit::functions {
namespace {

using Lines = std::vector<std::string>;
using tracefs::FakeTree;

std::string kept(LineFilter f, const std::vector<std::string>& chunks) {
  std::string out;
  for (const auto& c : chunks) f.feed(c, out);
  f.finish(out);
  return out;
}

TEST(FunctionsLineFilter, HeaderLinesOnlyWithHeaders) {
  const std::string text = "# tracer: function\n#\n  reads-1 [000] ..... 1.0: vfs_read <-ksys_read\n";
  EXPECT_EQ(kept(LineFilter(false, false), {text}),
            "  reads-1 [000] ..... 1.0: vfs_read <-ksys_read\n");
  EXPECT_EQ(kept(LineFilter(true, false), {text}), text);
}

TEST(FunctionsLineFilter, LinesSplitAcrossReadsAreWhole) {
  EXPECT_EQ(kept(LineFilter(false, false), {"# trac", "er\n 0)  ", " |  vfs_read() {\n 0) ", "}"}),
            " 0)   |  vfs_read() {\n 0) }\n");
}

// A comm renamed with prctl to hold ESC (or a C1 control) must not drive
// the terminal: control characters print as '?', the kernel's tabs stay.
TEST(FunctionsLineFilter, ControlCharactersPrintAsQuestionMarks) {
  EXPECT_EQ(kept(LineFilter(false, false),
                 {" ev\x1b[2Jil-9 [000]\t1.0: vfs_read <-ksys_read\n x\xc2\x9b-1 [001] 2.0: y\n"}),
            " ev?[2Jil-9 [000]\t1.0: vfs_read <-ksys_read\n x?-1 [001] 2.0: y\n");
}

// perf-tools' funcslower -P leaves out the context-switch markers.
TEST(FunctionsLineFilter, SwitchMarkersDropped) {
  const std::string text =
      " ------------------------------------------\n"
      " 1)   sleeps-5    =>    <idle>-0   \n"
      " ------------------------------------------\n"
      "\n"
      " 1)   sleeps-5    | * 20274.96 us |  } /* hrtimer_nanosleep */\n";
  EXPECT_EQ(kept(LineFilter(false, true), {text}),
            " 1)   sleeps-5    | * 20274.96 us |  } /* hrtimer_nanosleep */\n");
  EXPECT_EQ(kept(LineFilter(false, false), {text}), text);
}

TEST(FunctionsHeaderLine, AsPerfToolsSaysIt) {
  Options o;
  o.functions = "vfs_read";
  EXPECT_EQ(header_line(o), "Tracing \"vfs_read\"... Ctrl-C to end.\n");
  o.pid = 198;
  o.duration = 5;
  EXPECT_EQ(header_line(o), "Tracing \"vfs_read\" for PID 198 for 5 seconds...\n");
  o.pid.reset();
  o.tid = 7;
  o.duration.reset();
  o.threshold_us = 10000;
  EXPECT_EQ(header_line(o), "Tracing \"vfs_read\" for TID 7 slower than 10000 us... Ctrl-C to end.\n");
}

// Parses args as the tool does; returns the exit code of a usage error, or
// nullopt with o filled.
std::optional<int> parse(SharedOptions::Tool tool, std::vector<const char*> args, Options& o,
                         std::string* err = nullptr) {
  cli::Command cmd(args[0], "");
  SharedOptions shared(cmd, o, tool);
  std::ostringstream out, e;
  auto code = cmd.parse(static_cast<int>(args.size()), args.data(), out, e);
  if (err) *err = e.str();
  if (code) return code;
  testing::internal::CaptureStderr();
  auto c = shared.check();
  std::string msg = testing::internal::GetCapturedStderr();
  if (err) *err += msg;
  return c;
}

TEST(FunctionsOptions, AllInfoIsHPt) {
  Options o;
  ASSERT_FALSE(parse(SharedOptions::Tool::kFuncgraph, {"funcgraph", "-a", "-m", "3", "vfs_read"}, o));
  EXPECT_TRUE(o.graph);
  EXPECT_TRUE(o.headers && o.proc && o.abstime);
  EXPECT_FALSE(o.tail || o.no_duration || o.on_cpu_only);
  EXPECT_EQ(o.max_depth, 3);
  EXPECT_EQ(o.functions, "vfs_read");
  EXPECT_EQ(o.tool, "funcgraph");
}

TEST(FunctionsOptions, UsageErrors) {
  Options o;
  std::string err;
  EXPECT_EQ(parse(SharedOptions::Tool::kFunctrace, {"functrace", "-p", "1", "-L", "2", "f"}, o, &err), 2);
  EXPECT_NE(err.find("use either -p or -L"), std::string::npos) << err;
  Options m;
  EXPECT_EQ(parse(SharedOptions::Tool::kFuncgraph, {"funcgraph", "-m", "0", "f"}, m, &err), 2);
  Options s;
  EXPECT_EQ(parse(SharedOptions::Tool::kFuncslower, {"funcslower", "f", "ten"}, s, &err), 2);
  EXPECT_NE(err.find("latency_us 'ten'"), std::string::npos) << err;
  Options missing;
  EXPECT_EQ(parse(SharedOptions::Tool::kFuncslower, {"funcslower", "f"}, missing, &err), 2);
  // functrace has no function_graph options.
  Options t;
  EXPECT_EQ(parse(SharedOptions::Tool::kFunctrace, {"functrace", "-T", "f"}, t, &err), 2);
  Options ok;
  ASSERT_FALSE(parse(SharedOptions::Tool::kFuncslower, {"funcslower", "-C", "-d", "2", "f*", "500"}, ok));
  EXPECT_EQ(ok.threshold_us, 500u);
  EXPECT_TRUE(ok.on_cpu_only);
  EXPECT_EQ(ok.duration, 2.0);
}

// The top level as the kernel shows it before a run.
void put_top_level(const FakeTree& t) {
  t.put("available_tracers", "function_graph function nop\n");
  t.put("current_tracer", "nop\n");
  t.put("tracing_on", "1\n");
  t.put("trace", "");
  t.put("trace_pipe", " 0)               |  vfs_read() {\n 0)   1.000 us    |  }\n");
  t.put("buffer_size_kb", "1408\n");
  t.put("set_ftrace_filter", "#### all functions enabled ####\n");
  t.put("set_graph_function", "#### all functions enabled ####\n");
  t.put("set_ftrace_pid", "no pid\n");
  t.put("max_graph_depth", "0\n");
  t.put("tracing_thresh", "0\n");
  t.put("per_cpu/cpu0/stats", "entries: 0\noverrun: 0\ndropped events: 3\n");
  t.put("per_cpu/cpu1/stats", "entries: 0\noverrun: 0\ndropped events: 4\n");
  for (const char* opt : {"overwrite", "sleep-time", "function-fork"}) t.put(std::string("options/") + opt, "1\n");
  for (const char* opt : {"funcgraph-abstime", "funcgraph-proc", "funcgraph-tail"})
    t.put(std::string("options/") + opt, "0\n");
  t.put("options/funcgraph-duration", "1\n");
}

// funcgraph where instances cannot have function_graph (the fake instance
// lists no tracer): the instance is given up, the top level taken under
// the lock, every option set before the tracer and all of it undone after,
// newest first; the lock is gone at the end.
TEST(FunctionsTracer, GraphAtTheTopLevelUnderTheLockAndAllUndone) {
  FakeTree t;
  put_top_level(t);
  const std::string lock = t.dir() + "/ftrace-lock";
  Options o;
  o.tool = "funcgraph";
  o.graph = true;
  o.functions = "vfs_read";
  o.pid = getpid();
  o.max_depth = 2;
  o.abstime = o.proc = o.tail = o.no_duration = o.on_cpu_only = true;
  std::string pids;
  for (int tid : threads_of(getpid())) pids += (pids.empty() ? "" : " ") + std::to_string(tid);
  std::string instance;
  {
    auto r = Tracer::start(o, t.dir(), /*instances=*/true, lock);
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ((*r)->path(), t.dir());
    EXPECT_EQ(t.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    EXPECT_EQ(t.get("current_tracer"), "function_graph\n");
    EXPECT_EQ(t.get("options/funcgraph-duration"), "0\n");
    instance = t.writes().front().substr(std::string("mkdir T/").size());
    // The pipe's text is printed as it is.
    testing::internal::CaptureStdout();
    (*r)->poll(0);
    EXPECT_EQ(testing::internal::GetCapturedStdout(),
              " 0)               |  vfs_read() {\n 0)   1.000 us    |  }\n");
    (*r)->stop();
    std::ostringstream out, err;
    (*r)->report(out, err);
    EXPECT_EQ(err.str(), "WARNING: 7 events lost: the kernel buffer was full.\n");
  }
  EXPECT_EQ(t.writes(), (Lines{
                            "mkdir T/" + instance,
                            "rmdir T/" + instance,
                            "write T/trace ",
                            "write T/tracing_on 0",
                            "write T/options/overwrite 0",
                            "write T/set_ftrace_pid " + pids,
                            "write T/options/function-fork 1",
                            "write T/set_graph_function vfs_read",
                            "write T/max_graph_depth 2",
                            // The options after the tracer (3.10 shows
                            // funcgraph-* only while it is current).
                            "write T/current_tracer function_graph",
                            "write T/options/sleep-time 0",
                            "write T/options/funcgraph-abstime 1",
                            "write T/options/funcgraph-proc 1",
                            "write T/options/funcgraph-tail 1",
                            "write T/options/funcgraph-duration 0",
                            "write T/tracing_on 1",
                            // stop()
                            "write T/tracing_on 0",
                            // the undo, newest first (stop's, the start's)
                            "write T/tracing_on 1",
                            "write T/tracing_on 0",
                            "write T/options/funcgraph-duration 1",
                            "write T/options/funcgraph-tail 0",
                            "write T/options/funcgraph-proc 0",
                            "write T/options/funcgraph-abstime 0",
                            "write T/options/sleep-time 1",
                            "write T/current_tracer nop",
                            "write T/max_graph_depth 0",
                            "write T/set_graph_function ",
                            "write T/options/function-fork 1",
                            "write T/set_ftrace_pid ",
                            "write T/options/overwrite 1",
                            "write T/tracing_on 1",
                            "write T/trace ",
                        }));
  EXPECT_FALSE(t.has("ftrace-lock"));
}

// funcslower: the functions in set_ftrace_filter too, tracing_thresh, and
// -d: a larger buffer, no pipe.
TEST(FunctionsTracer, SlowerSetsTheThresholdAndFilter) {
  FakeTree t;
  put_top_level(t);
  Options o;
  o.tool = "funcslower";
  o.graph = true;
  o.functions = "hrtimer_nanosleep";
  o.threshold_us = 10000;
  o.duration = 1;
  {
    auto r = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(t.get("tracing_thresh"), "10000\n");
  }
  const Lines w = t.writes();
  const Lines setup(w.begin(), w.begin() + 8);
  EXPECT_EQ(setup, (Lines{
                       "write T/trace ",
                       "write T/tracing_on 0",
                       "write T/options/overwrite 0",
                       "write T/buffer_size_kb 8192",
                       "write T/set_ftrace_filter hrtimer_nanosleep",
                       "write T/set_graph_function hrtimer_nanosleep",
                       "write T/tracing_thresh 10000",
                       "write T/current_tracer function_graph",
                   }));
  EXPECT_EQ(t.get("tracing_thresh"), "0\n");
  EXPECT_EQ(t.get("buffer_size_kb"), "1408\n");
}

// funcslower -p where set_ftrace_pid is a flag on the tasks (no pid list
// in instances, no function-fork: before Linux 4.6), which function_graph's
// threshold path does not read: refused before anything is changed.
TEST(FunctionsTracer, SlowerPidRefusedWithoutPerInstancePidLists) {
  FakeTree t;
  put_top_level(t);
  std::filesystem::remove(t.dir() + "/options/function-fork");
  Options o;
  o.tool = "funcslower";
  o.graph = true;
  o.functions = "hrtimer_nanosleep";
  o.threshold_us = 10000;
  o.pid = getpid();
  auto r = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOTSUP);
  EXPECT_NE(r.error().message.find("cannot trace -p under tracing_thresh"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().hint.find("Linux 4.6"), std::string::npos) << r.error().hint;
  EXPECT_TRUE(t.writes().empty());
  EXPECT_FALSE(t.has("ftrace-lock"));
  // Without a threshold (funcgraph) the flag is read: traced.
  o.threshold_us.reset();
  auto g = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
  ASSERT_TRUE(g) << g.error().str();
}

// A tracer option the kernel lacks even with the tracer current (3.10 has
// no funcgraph-tail): refused, naming the flag and the option, all undone.
TEST(FunctionsTracer, AMissingTracerOptionIsRefused) {
  FakeTree t;
  put_top_level(t);
  std::filesystem::remove(t.dir() + "/options/funcgraph-tail");
  Options o;
  o.tool = "funcgraph";
  o.graph = true;
  o.functions = "vfs_read";
  o.tail = true;
  auto r = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_NE(r.error().message.find("cannot set -T (funcgraph-tail)"), std::string::npos)
      << r.error().message;
  EXPECT_NE(r.error().hint.find("function_graph tracer has no funcgraph-tail option"),
            std::string::npos)
      << r.error().hint;
  EXPECT_EQ(t.get("current_tracer"), "nop\n");
  EXPECT_FALSE(t.has("ftrace-lock"));
}

// Another tracer current at the top level: refused, nothing changed, the
// lock released.
TEST(FunctionsTracer, AnotherTracerAtTheTopLevelIsLeftAlone) {
  FakeTree t;
  put_top_level(t);
  t.put("current_tracer", "function\n");
  Options o;
  o.tool = "functrace";
  o.functions = "vfs_read";
  auto r = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, EBUSY);
  EXPECT_NE(r.error().message.find("current_tracer is function"), std::string::npos);
  EXPECT_EQ(t.writes(), (Lines{"write T/trace ", "write T/trace "}));
  EXPECT_FALSE(t.has("ftrace-lock"));
}

// A live holder of the lock: refused, naming it.
TEST(FunctionsTracer, ALiveLockHolderIsNamed) {
  FakeTree t;
  put_top_level(t);
  t.put("ftrace-lock", std::to_string(getppid()) + "\n");
  Options o;
  o.tool = "funcgraph";
  o.graph = true;
  o.functions = "vfs_read";
  auto r = Tracer::start(o, t.dir(), /*instances=*/false, t.dir() + "/ftrace-lock");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, EBUSY);
  EXPECT_NE(r.error().message.find("in use by PID " + std::to_string(getppid())), std::string::npos)
      << r.error().message;
  EXPECT_TRUE(t.writes().empty());
}

}  // namespace
}  // namespace tracekit::functions
