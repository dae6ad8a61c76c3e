// tracekit features on this host: each feature's answer against what this
// machine really has (files tracefs shows, what perf_event_open accepts, a
// function tracer that lockdown refuses), and TRACEKIT_KERNEL_FEATURES.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>

#include "feature_table/feature_table.hpp"
#include "harness.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::testing {
namespace {

// NAME -> the HAS column of tracekit features.
std::map<std::string, std::string> feature_states(const std::string& out) {
  std::map<std::string, std::string> m;
  for (const auto& l : lines_of(out)) {
    if (l.empty()) break;  // the tools table follows
    auto sp = l.find(' ');
    if (sp == std::string::npos) continue;
    auto rest = l.find_first_not_of(' ', sp);
    m[l.substr(0, sp)] = l.substr(rest, l.find(' ', rest) - rest);
  }
  return m;
}

std::string tool_line(const std::string& out, const std::string& tool, const std::string& option) {
  for (const auto& l : lines_of(out))
    if (l.rfind(tool + " ", 0) == 0 && l.find(" " + option + " ") != std::string::npos) return l;
  return {};
}

class FeaturesRuntime : public TracingTest {};

TEST_F(FeaturesRuntime, AnswersMatchThisHost) {
  auto dir = tracefs::tracing_dir();
  ASSERT_TRUE(dir) << dir.error().str();
  auto r = run({tool_path("tracekit"), "features"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = feature_states(r.out);
  auto yes_if = [&](const std::string& rel) {
    return std::filesystem::exists(*dir + "/" + rel) ? "yes" : "no";
  };
  EXPECT_EQ(s["tracefs"], "yes");
  EXPECT_EQ(s["instances"], yes_if("instances"));
  EXPECT_EQ(s["kprobes"], yes_if("kprobe_events"));
  EXPECT_EQ(s["uprobes"], yes_if("uprobe_events"));
  EXPECT_EQ(s["dynamic_events"], yes_if("dynamic_events"));
  EXPECT_EQ(s["error_log"], yes_if("error_log"));
  EXPECT_EQ(s["set_event_pid"], yes_if("set_event_pid"));
  EXPECT_EQ(s["function_profiler"], yes_if("function_profile_enabled"));
  EXPECT_EQ(s["syscall_tracepoints"], yes_if("events/syscalls"));
  // Lockdown: available_tracers may list "function", the filter list is refused.
  bool filter_readable = !slurp(*dir + "/available_filter_functions").empty();
  if (!filter_readable) {
    EXPECT_EQ(s["function_tracer"], "no");
  }
  // perf: this kernel (6.x) has every attr bit the tools use.
  for (const char* f : {"perf_events", "context_switch", "use_clockid", "mmap2", "comm_exec",
                        "sample_max_stack", "exclude_callchain", "perf_event_max_stack", "user_stack",
                        "lost_samples"})
    EXPECT_EQ(s[f], "yes") << f;
  EXPECT_EQ(s.size(), kernel::feature_table().size() + 1) << r.out;  // and the header line
  EXPECT_NE(tool_line(r.out, "profile", "-").find("works: "), std::string::npos) << r.out;
  EXPECT_NE(tool_line(r.out, "uprobe", "-").find("works: "), std::string::npos) << r.out;
  if (s["kprobes"] == "no") {
    EXPECT_NE(tool_line(r.out, "kprobe", "-").find("no: needs kprobes"), std::string::npos);
  }
}

// Issue 38: "funccount -p PID: no: needs kprobes", yet funccount counts
// tracepoints and uprobes under -p with perf (777 of 777). Kernel functions
// and events are rows of their own now; root needs nothing more.
TEST_F(FeaturesRuntime, FunccountPidRowsAndNoRootNote) {
  auto r = run({tool_path("tracekit"), "features"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(tool_line(r.out, "funccount", "t: and lib:"),
            "funccount      -p PID, t: and lib:              works: perf counters on the events in "
            "the process's threads");
  EXPECT_TRUE(contains(r.out, "\nfunccount      -p PID, kernel functions         ")) << r.out;
  EXPECT_TRUE(tool_line(r.out, "funccount", "-p PID").empty());  // the one wrong row is gone
  EXPECT_FALSE(contains(r.out, "needs root")) << r.out;
  EXPECT_FALSE(contains(r.out, "Not root")) << r.out;
  for (const auto& l : lines_of(r.out)) {
    if (l.empty()) break;
    EXPECT_NE(l.substr(22, 2), "? ") << l;
  }
}

TEST_F(FeaturesRuntime, ForcedOffFeaturesAndTheToolsThatNeedThem) {
  auto r = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-context_switch,-instances",
                tool_path("tracekit"), "features"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto s = feature_states(r.out);
  EXPECT_EQ(s["context_switch"], "off");
  EXPECT_EQ(s["instances"], "off");
  // Their fallbacks: switch-ins from sched_switch, the top level.
  EXPECT_NE(tool_line(r.out, "offcputime", "-").find("works: perf sched_switch samples, "
                                                     "switch-ins from their next_pid"),
            std::string::npos)
      << r.out;
  EXPECT_NE(tool_line(r.out, "tpoint", "-").find("works: events at the top level"),
            std::string::npos)
      << r.out;
  auto none = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-event_tracing,-perf_events",
                   tool_path("tracekit"), "features"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(tool_line(none.out, "tpoint", "-").find("no: needs event_tracing"), std::string::npos)
      << none.out;
  EXPECT_NE(tool_line(none.out, "offcputime", "-").find("no: needs perf_events"),
            std::string::npos)
      << none.out;

  auto json = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-context_switch",
                   tool_path("tracekit"), "features", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_NE(json.out.find("{\"name\": \"context_switch\", \"state\": \"off\""), std::string::npos)
      << json.out;
  EXPECT_NE(json.out.find("\"path\": \"perf sched_switch samples, switch-ins from their next_pid"),
            std::string::npos)
      << json.out;

  auto bad = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-no_such", tool_path("tracekit"),
                  "features"});
  EXPECT_EQ(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("no feature named \"no_such\""), std::string::npos) << bad.err;
}

// A tool with kprobes forced off takes the function tracer or says which
// feature is missing, never an errno.
TEST_F(FeaturesRuntime, KprobeForcedOffSaysWhichFeature) {
  auto r = run({"/usr/bin/env", "TRACEKIT_KERNEL_FEATURES=-kprobes", tool_path("kprobe"),
                "p:vfs_read"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kprobe events (kprobe_events)"), std::string::npos) << r.err;
  EXPECT_EQ(tracefs_snapshot(), before_);
}

}  // namespace
}  // namespace tracekit::testing
