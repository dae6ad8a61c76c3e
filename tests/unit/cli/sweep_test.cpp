#include "cli/sweep.hpp"

#include <gtest/gtest.h>

namespace tracekit::cli {
namespace {

// Only a mounted tracefs counts: debugfs/tracing is an automount point, and
// looking inside it would mount tracefs for a tool that needs none.
TEST(CliSweepTest, MountedTracefsOnly) {
  struct Case {
    const char* mounts;
    const char* dir;
  };
  const Case cases[] = {
      {"", ""},
      {"proc /proc proc rw 0 0\nsysfs /sys sysfs rw 0 0\n", ""},
      {"debugfs /sys/kernel/debug debugfs rw 0 0\n", ""},
      {"debugfs /sys/kernel/debug debugfs rw 0 0\n"
       "tracefs /sys/kernel/debug/tracing tracefs rw 0 0\n",
       "/sys/kernel/debug/tracing"},
      {"tracefs /sys/kernel/tracing tracefs rw,nosuid 0 0\n"
       "tracefs /mnt/t tracefs rw 0 0\n",
       "/sys/kernel/tracing"},
      {"nodev /srv/tracing tracefs rw 0 0", "/srv/tracing"},  // no final newline
      {"short line\n", ""},
  };
  for (const auto& c : cases) EXPECT_EQ(mounted_tracefs(c.mounts), c.dir) << c.mounts;
}

}  // namespace
}  // namespace tracekit::cli
