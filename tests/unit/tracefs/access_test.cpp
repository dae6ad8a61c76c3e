// Issue 8, row 15: a user who may not look into tracefs hears that it is a
// permission problem (run as root), never that tracefs or a tracepoint is
// missing. access_error() decides the words; ProbeGroup::open and
// EventFormat::load use it on a fake tree that this user may not enter.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "fake_tree.hpp"
#include "tracefs/dynamic_events.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::tracefs {
namespace {

TEST(TracefsAccessTest, PermissionIsNotAbsence) {
  struct Case {
    int err;
    const char* message;
    const char* hint;
  };
  const Case cases[] = {
      {EACCES, "no permission to use tracefs", "run as root"},
      {EPERM, "no permission to use tracefs", "run as root"},
      {ENOENT, "cannot use tracefs", "is tracefs mounted there?"},
      {ENOTDIR, "cannot use tracefs", "is tracefs mounted there?"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.err);
    Error e = access_error("/sys/kernel/tracing/events", c.err);
    EXPECT_EQ(e.err, c.err);
    EXPECT_EQ(e.message, c.message);
    EXPECT_EQ(e.path, "/sys/kernel/tracing/events");
    EXPECT_EQ(e.hint, c.hint);
  }
}

TEST(TracefsAccessTest, MissingEventsDirectory) {
  FakeTree t;
  std::filesystem::remove_all(t.dir() + "/events");
  auto g = ProbeGroup::open(t.dir());
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error().str(), "cannot use tracefs: " + t.dir() +
                                 "/events: No such file or directory (is tracefs mounted there?)");
}

// What a non-root user meets in a root-only (0700) tracefs. The checks run
// in a child that is not root (root ignores modes): its exit code says
// which check failed.
TEST(TracefsAccessTest, ARootOnlyTreeSaysRunAsRoot) {
  FakeTree t;
  t.put("events/sched/sched_switch/format", "name: sched_switch\nID: 1\n");
  ASSERT_EQ(chmod(t.dir().c_str(), 0700), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (getuid() == 0) {
      if (setgid(65534) != 0 || setuid(65534) != 0) _exit(10);
    } else if (chmod(t.dir().c_str(), 0) != 0) {  // our own tree
      _exit(11);
    }
    const std::string events = t.dir() + "/events";
    const std::string want = "no permission to use tracefs: ";
    auto g = ProbeGroup::open(t.dir());
    if (g.ok()) _exit(1);
    if (g.error().str() != want + events + ": Permission denied (run as root)") _exit(2);
    auto f = EventFormat::load(t.dir(), "sched", "sched_switch");
    if (f.ok()) _exit(3);
    if (f.error().str() !=
        want + events + "/sched/sched_switch/format: Permission denied (run as root)")
      _exit(4);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  chmod(t.dir().c_str(), 0700);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0)
      << "1-2: ProbeGroup::open, 3-4: EventFormat::load, 10-11: could not drop access";
}

}  // namespace
}  // namespace tracekit::tracefs
