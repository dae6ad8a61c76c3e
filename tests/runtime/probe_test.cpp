// Spec expansion against this machine's tracefs and kernel symbols: names
// that exist on every kernel we support expand to exactly themselves.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "probe/spec.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::probe {
namespace {

class ProbeRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs";
    auto dir = tracefs::tracing_dir();
    ASSERT_TRUE(dir.ok()) << dir.error().str();
    dir_ = *dir;
  }
  std::vector<Target> expand_ok(const std::string& text, bool regex = false) {
    auto spec = parse_spec(text);
    EXPECT_TRUE(spec.ok()) << spec.error().str();
    if (!spec) return {};
    ExpandOptions opts;
    opts.regex = regex;
    opts.tracing_dir = dir_;
    auto r = expand(*spec, opts);
    EXPECT_TRUE(r.ok()) << r.error().str();
    return r ? *r : std::vector<Target>{};
  }
  std::string dir_;
};

TEST_F(ProbeRuntime, OneTracepoint) {
  auto t = expand_ok("t:syscalls:sys_enter_getppid");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].kind, Kind::kTracepoint);
  EXPECT_EQ(t[0].system, "syscalls");
  EXPECT_EQ(t[0].event, "sys_enter_getppid");

  auto getppid = expand_ok("t:syscalls:sys_*_getppid");
  ASSERT_EQ(getppid.size(), 2u);
  EXPECT_EQ(getppid[0].event, "sys_enter_getppid");
  EXPECT_EQ(getppid[1].event, "sys_exit_getppid");
}

TEST_F(ProbeRuntime, KernelFunctions) {
  auto read = expand_ok("vfs_read");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].function, "vfs_read");
  auto rw = expand_ok("^vfs_(read|write)$", true);
  ASSERT_EQ(rw.size(), 2u);
  EXPECT_EQ(rw[0].function, "vfs_read");
  EXPECT_EQ(rw[1].function, "vfs_write");
  // Every kernel function: more than bcc's default limit of 1000.
  auto all = parse_spec("*");
  ASSERT_TRUE(all.ok());
  ExpandOptions opts;
  opts.tracing_dir = dir_;
  auto r = expand(*all, opts);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("more than the limit of 1000"), std::string::npos);
}

}  // namespace
}  // namespace tracekit::probe
