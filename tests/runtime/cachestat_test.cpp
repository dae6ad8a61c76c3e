// cachestat on this kernel, which has no way of counting kernel functions
// (no kprobes, the function tracer refused, no profiler): it refuses in one
// line that names what is missing and the CONFIG options, exits 1, and
// leaves tracefs as it was (TracingTest checks). Its counting is tested for
// real in the VM tier (tests/vm/cachestat.sh), on 6.1 and 5.10.
#include <gtest/gtest.h>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

class CachestatRuntime : public TracingTest {};

TEST_F(CachestatRuntime, RefusedClearlyWithoutKernelFunctionCounting) {
  // Forced off as well, for kernels that have them.
  ForcedFeatures off("-kprobes,-function_tracer,-function_profiler");
  for (const auto& args : std::vector<std::vector<std::string>>{{}, {"-Dt", "2"}}) {
    std::vector<std::string> argv{tool_path("cachestat")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(
        contains(r.err, "cachestat: cannot count kernel functions here: kprobes turned off"))
        << r.err;
    EXPECT_TRUE(contains(r.err, "CONFIG_KPROBE_EVENTS")) << r.err;
    EXPECT_TRUE(contains(r.err, "CONFIG_FUNCTION_PROFILER")) << r.err;
  }
}

TEST_F(CachestatRuntime, BadInput) {
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"0"}, {"-1"}, {"x"}, {"1", "2"}, {"-q"}}) {
    std::vector<std::string> argv{tool_path("cachestat")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, "USAGE: cachestat [-Dht] [interval]")) << r.err;
  }
  auto r = run({tool_path("cachestat"), "-h"}, 30);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(contains(r.out, "USAGE: cachestat [-Dht] [interval]")) << r.out;
}

}  // namespace
}  // namespace tracekit::testing
