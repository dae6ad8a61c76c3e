// funccount: its table, perf-tools' header, the choice of way, the
// function profiler's trace_stat files, and the profiler's control writes
// and undo against a fake tracefs tree.
#include "funccount/funccount.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <functional>
#include <sstream>

#include "../tracefs/fake_tree.hpp"

namespace tracekit::funccount {
namespace {

using Lines = std::vector<std::string>;

TEST(FunccountTable, AscendingNonZeroTopLast) {
  EXPECT_EQ(format_table({{"vfs_write", 3}, {"vfs_read", 997}, {"vfs_open", 0}, {"a_tie", 3}}, {}),
            "FUNC                              COUNT\n"
            "a_tie                                 3\n"
            "vfs_write                             3\n"
            "vfs_read                            997\n");
  EXPECT_EQ(format_table({{"vfs_write", 3}, {"vfs_read", 997}, {"x", 1}}, 2),
            "FUNC                              COUNT\n"
            "vfs_write                             3\n"
            "vfs_read                            997\n");
  EXPECT_EQ(format_table({}, {}), "FUNC                              COUNT\n");
}

// A user function's name (lib: specs) comes from an ELF file anyone may
// have built: ESC and newline print as '?', so they neither drive the
// terminal nor forge a row; a name longer than any buffer is kept whole.
TEST(FunccountTable, ControlCharactersInNamesPrintAsQuestionMarks) {
  const std::string long_name(600, 'n');
  EXPECT_EQ(format_table({{"ev\x1b[2Jil\nsshd 1", 2}, {long_name, 1}}, {}),
            "FUNC                              COUNT\n" + long_name + "        1\n" +
                "ev?[2Jil?sshd 1                       2\n");
}

TEST(FunccountHeader, AsPerfToolsSaysIt) {
  Options o;
  o.pattern = "vfs_rea*";
  EXPECT_EQ(header_line(o), "Tracing \"vfs_rea*\"... Ctrl-C to end.\n");
  o.top = 5;
  EXPECT_EQ(header_line(o), "Tracing \"vfs_rea*\". Top 5 only... Ctrl-C to end.\n");
  o.duration = 3;
  EXPECT_EQ(header_line(o), "Tracing \"vfs_rea*\" for 3 seconds. Top 5 only...\n");
}

// A command line follows bcc's funccount when it uses what only bcc's has
// (-p, -r, a spec with ':'), and then prints bcc's header, "%-36s %8s"
// table (COUNT at column 40, as bcc 0.26's funccount_example.txt).
TEST(FunccountStyle, BccLinesPrintAsBcc) {
  Options o;
  o.pattern = "tcp_*";
  EXPECT_EQ(style_of(o), Style::kPerfTools);
  o.top = 5;
  o.interval = 1;
  EXPECT_EQ(style_of(o), Style::kPerfTools);
  for (auto change : std::vector<std::function<void(Options&)>>{
           [](Options& x) { x.pid = 185; }, [](Options& x) { x.cpu = 1; },
           [](Options& x) { x.regex = true; },
           [](Options& x) { x.pattern = "c:malloc"; }, [](Options& x) { x.pattern = "t:block:*"; },
           [](Options& x) { x.pattern = "p::vfs_read"; }}) {
    Options b;
    b.pattern = "vfs_*";
    change(b);
    EXPECT_EQ(style_of(b), Style::kBcc) << b.pattern;
  }
  Options r;
  r.pattern = "c:(write|read)$";
  r.regex = true;
  EXPECT_EQ(header_line(r, 2), "Tracing 2 functions for \"c:(write|read)$\"... Hit Ctrl-C to end.\n");
  r.duration = 5;
  EXPECT_EQ(header_line(r, 2), "Tracing 2 functions for \"c:(write|read)$\"... Hit Ctrl-C to end.\n");
  EXPECT_EQ(format_table({{"write", 4}, {"read", 2}}, {}, Style::kBcc),
            "FUNC                                    COUNT\n"
            "read                                        2\n"
            "write                                       4\n");
}

TEST(FunccountWays, ProfilerFirstButNotForAProcess) {
  using B = Backend;
  EXPECT_EQ(kernel_function_backends(true, true, true, false),
            (std::vector<B>{B::kProfiler, B::kKprobeCounters, B::kFunctionTracer}));
  EXPECT_EQ(kernel_function_backends(true, true, true, true),
            (std::vector<B>{B::kKprobeCounters, B::kFunctionTracer}));
  EXPECT_EQ(kernel_function_backends(false, false, true, true), (std::vector<B>{B::kFunctionTracer}));
  EXPECT_TRUE(kernel_function_backends(true, false, false, true).empty());
}

// Tracepoints: perf counters for a few, the run's instance for more than
// kMaxCountedTracepoints where there are instances; syscall stand-ins
// count one each (a perf counter each, its filter run on every syscall).
TEST(FunccountWays, ManyTracepointsInTheInstance) {
  using B = Backend;
  auto tracepoints = [](size_t n, int first_nr = -1) {
    std::vector<probe::Target> ts(n);
    for (size_t i = 0; i < n; ++i) {
      ts[i].kind = probe::Kind::kTracepoint;
      ts[i].system = "syscalls";
      ts[i].event = "sys_enter_" + std::to_string(i);
      if (first_nr >= 0) ts[i].syscall_nr = first_nr + static_cast<int>(i);
    }
    return ts;
  };
  EXPECT_EQ(tracepoint_backend(tracepoints(1), true), B::kEventCounters);
  EXPECT_EQ(tracepoint_backend(tracepoints(kMaxCountedTracepoints), true), B::kEventCounters);
  EXPECT_EQ(tracepoint_backend(tracepoints(kMaxCountedTracepoints + 1), true), B::kEventTracer);
  EXPECT_EQ(tracepoint_backend(tracepoints(360), true), B::kEventTracer);
  EXPECT_EQ(tracepoint_backend(tracepoints(360), false), B::kEventCounters);
  EXPECT_EQ(tracepoint_backend(tracepoints(345, 0), true), B::kEventTracer);
  EXPECT_EQ(tracepoint_backend(tracepoints(kMaxCountedTracepoints, 0), true), B::kEventCounters);
}

const char* kStat =
    "  Function                               Hit    Time            Avg             s^2\n"
    "  --------                               ---    ----            ---             ---\n"
    "  vfs_read                               997    1234.567 us     1.238 us        0.310 us\n"
    "  vfs_readv                              3    12.000 us       4.000 us        0.100 us\n";

TEST(FunccountTraceStat, HitsOfEachFunction) {
  EXPECT_EQ(parse_trace_stat(kStat),
            (std::vector<std::pair<std::string, uint64_t>>{{"vfs_read", 997}, {"vfs_readv", 3}}));
  // Kernels without the graph times print the hits alone.
  EXPECT_EQ(parse_trace_stat("  Function    Hit\n  --------    ---\n  schedule    42\n"),
            (std::vector<std::pair<std::string, uint64_t>>{{"schedule", 42}}));
}

// The profiler: the functions and the switch at the top level under the
// lock; a report sums the CPUs' files and starts the counts again (0 then
// 1); all restored, the lock gone, at the end.
TEST(FunccountProfiler, CountsAtTheTopLevelUnderTheLock) {
  tracefs::FakeTree t;
  t.put("set_ftrace_filter", "#### all functions enabled ####\n");
  t.put("function_profile_enabled", "0\n");
  t.put("trace", "");
  t.put("trace_stat/function0", kStat);
  t.put("trace_stat/function1", "  Function   Hit\n  vfs_read   3\n");
  const std::string lock = t.dir() + "/ftrace-lock";
  {
    auto e = start_profiler(t.dir(), {"vfs_read", "vfs_readv"}, {}, lock);
    ASSERT_TRUE(e) << e.error().str();
    EXPECT_EQ(t.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    // A second user is refused, naming the holder.
    auto second = start_profiler(t.dir(), {"vfs_read"}, {}, lock);
    ASSERT_FALSE(second);
    EXPECT_NE(second.error().message.find("in use by PID " + std::to_string(getpid())),
              std::string::npos);
    std::ostringstream out, err;
    (*e)->stop();
    (*e)->report(out, err);
    EXPECT_EQ(out.str(),
              "FUNC                              COUNT\n"
              "vfs_readv                             3\n"
              "vfs_read                           1000\n");
  }
  EXPECT_EQ(t.writes(), (Lines{
                            "write T/trace ",
                            "write T/set_ftrace_filter vfs_read vfs_readv",
                            "write T/function_profile_enabled 1",
                            "write T/function_profile_enabled 0",
                            "write T/function_profile_enabled 1",
                            "write T/function_profile_enabled 0",
                            "write T/set_ftrace_filter ",
                            "write T/trace ",
                        }));
  EXPECT_FALSE(t.has("ftrace-lock"));
}

// -c: the profiler counts per CPU; CPU 1's file alone.
TEST(FunccountProfiler, OneCpuReadsItsFileAlone) {
  tracefs::FakeTree t;
  t.put("set_ftrace_filter", "#### all functions enabled ####\n");
  t.put("function_profile_enabled", "0\n");
  t.put("trace", "");
  t.put("trace_stat/function0", kStat);
  t.put("trace_stat/function1", "  Function   Hit\n  vfs_read   3\n");
  t.put("trace_stat/function11", "  Function   Hit\n  vfs_read   5\n");
  auto e = start_profiler(t.dir(), {"vfs_read"}, {}, t.dir() + "/ftrace-lock", 1);
  ASSERT_TRUE(e) << e.error().str();
  std::ostringstream out, err;
  (*e)->stop();
  (*e)->report(out, err);
  EXPECT_EQ(out.str(),
            "FUNC                              COUNT\n"
            "vfs_read                              3\n");
}

}  // namespace
}  // namespace tracekit::funccount
