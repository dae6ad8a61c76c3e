// functrace, funcgraph and funcslower on this kernel. They trace for real in
// the VM tier (tests/vm/func*.sh): this machine's kernel refuses the
// function tracers (lockdown). Here: each refuses clearly where the tracer
// is missing (exit 1, one line naming the feature and what brings it) and
// leaves tracefs as it was; forced off, it says who turned it off.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

class FunctionToolsRuntime : public TracingTest {};

struct Refusal {
  std::vector<std::string> argv;
  std::string feature;  // as the message names it
};

const std::vector<Refusal>& refusals() {
  static const std::vector<Refusal> r{
      {{"functrace", "vfs_read"}, "function tracer"},
      {{"functrace", "-d", "1", "-p", "1", "vfs_*"}, "function tracer"},
      {{"funcgraph", "-m", "2", "vfs_read"}, "function_graph tracer"},
      {{"funcgraph", "-a", "-T", "-d", "1", "vfs_read"}, "function_graph tracer"},
      {{"funcslower", "vfs_read", "10000"}, "function_graph tracer"},
      {{"funcslower", "-P", "-C", "hrtimer_nanosleep", "1000"}, "function_graph tracer"},
  };
  return r;
}

// Whether the function tracer can be used here: lockdown refuses reading
// available_filter_functions although available_tracers lists "function".
bool function_tracer_usable() {
  for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"}) {
    int fd = ::open((std::string(d) + "/available_filter_functions").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char c;
    ssize_t n = ::read(fd, &c, 1);
    ::close(fd);
    if (n == 1) return true;
  }
  return false;
}

void expect_refused(const Refusal& c, const RunResult& r, const std::string& why) {
  std::string line;
  for (const auto& a : c.argv) line += a + " ";
  EXPECT_EQ(r.exit_code, 1) << line << r.err;
  EXPECT_TRUE(r.out.empty()) << line << r.out;
  EXPECT_TRUE(contains(r.err, c.argv[0] + ": ")) << line << r.err;
  EXPECT_TRUE(contains(r.err, c.feature)) << line << r.err;
  EXPECT_TRUE(contains(r.err, why)) << line << r.err;
  EXPECT_EQ(lines_of(r.err).size(), 1u) << line << r.err;
}

TEST_F(FunctionToolsRuntime, RefuseClearlyWithoutTheTracer) {
  if (function_tracer_usable())
    GTEST_SKIP() << "this kernel allows the function tracer: the tools are tested on it "
                    "in the VM tier's way, not here";
  for (const auto& c : refusals()) {
    std::vector<std::string> argv = c.argv;
    argv[0] = tool_path(argv[0]);
    expect_refused(c, run(argv, 30), "brings it");
  }
}

TEST_F(FunctionToolsRuntime, ForcedOffSaysWho) {
  ForcedFeatures off("-function_tracer,-function_graph");
  for (const auto& c : refusals()) {
    std::vector<std::string> argv = c.argv;
    argv[0] = tool_path(argv[0]);
    expect_refused(c, run(argv, 30), "turned off by TRACEKIT_KERNEL_FEATURES");
  }
}

}  // namespace
}  // namespace tracekit::testing
