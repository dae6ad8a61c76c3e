// Probes::create for tracepoint targets on a fake tracing directory: the
// syscalls:* targets of a kernel without syscall tracepoints become one
// raw_syscalls event per side, with the id filter of their syscalls.
#include "session/probes.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/syscall.h>

#include <filesystem>
#include <fstream>

namespace tracekit::session {
namespace {

namespace fs = std::filesystem;

class ProbesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tracekit-probes-XXXXXX";
    dir_ = mkdtemp(tmpl);
    event("raw_syscalls/sys_enter", 21);
    event("raw_syscalls/sys_exit", 22);
    event("sched/sched_switch", 300);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void event(const std::string& path, int id) {
    fs::create_directories(dir_ + "/events/" + path);
    std::ofstream(dir_ + "/events/" + path + "/id") << id << "\n";
  }

  static probe::Target tracepoint(const std::string& system, const std::string& event,
                                  int nr = -1) {
    probe::Target t;
    t.kind = probe::Kind::kTracepoint;
    t.system = system;
    t.event = event;
    t.syscall_nr = nr;
    return t;
  }

  std::string dir_;
};

TEST_F(ProbesTest, SyscallTargetsBecomeRawEventsWithIdFilters) {
  auto p = Probes::create(dir_,
                          {tracepoint("syscalls", "sys_enter_getppid", SYS_getppid),
                           tracepoint("syscalls", "sys_enter_getpid", SYS_getpid),
                           tracepoint("syscalls", "sys_exit_getppid", SYS_getppid),
                           tracepoint("sched", "sched_switch")},
                          false);
  ASSERT_TRUE(p) << p.error().str();
  ASSERT_EQ(p->events().size(), 3u);
  const TraceEvent& enter = p->events()[0];
  EXPECT_EQ(enter.system, "raw_syscalls");
  EXPECT_EQ(enter.event, "sys_enter");
  EXPECT_EQ(enter.id, 21);
  EXPECT_EQ(enter.syscalls, (std::vector<int>{SYS_getpid, SYS_getppid}));
  EXPECT_EQ(enter.filter, "id == " + std::to_string(SYS_getpid) +
                              " || id == " + std::to_string(SYS_getppid));
  const TraceEvent& exit = p->events()[1];
  EXPECT_EQ(exit.event, "sys_exit");
  EXPECT_EQ(exit.id, 22);
  EXPECT_EQ(exit.filter, "id == " + std::to_string(SYS_getppid));
  const TraceEvent& sched = p->events()[2];
  EXPECT_EQ(sched.event, "sched_switch");
  EXPECT_EQ(sched.filter, "");
  EXPECT_TRUE(sched.syscalls.empty());
  // Three syscall events and a tracepoint are traced, through three events.
  EXPECT_EQ(p->size(), 4u);
  EXPECT_TRUE(p->raw_syscalls());
  EXPECT_TRUE(p->skipped().empty());
}

TEST_F(ProbesTest, WithoutSyscallTargetsNothingChanges) {
  auto p = Probes::create(dir_, {tracepoint("raw_syscalls", "sys_enter")}, false);
  ASSERT_TRUE(p) << p.error().str();
  ASSERT_EQ(p->events().size(), 1u);
  EXPECT_EQ(p->events()[0].filter, "");
  EXPECT_EQ(p->size(), 1u);
  EXPECT_FALSE(p->raw_syscalls());
}

// raw_syscalls:sys_enter traced whole already: an id filter on it would
// narrow it, so the syscall targets of that side are skipped, with a reason.
TEST_F(ProbesTest, RawEventAsATargetTakesPrecedence) {
  auto p = Probes::create(dir_,
                          {tracepoint("raw_syscalls", "sys_enter"),
                           tracepoint("syscalls", "sys_enter_getppid", SYS_getppid),
                           tracepoint("syscalls", "sys_exit_getppid", SYS_getppid)},
                          false);
  ASSERT_TRUE(p) << p.error().str();
  ASSERT_EQ(p->events().size(), 2u);
  EXPECT_EQ(p->events()[0].event, "sys_exit");
  EXPECT_EQ(p->events()[0].filter, "id == " + std::to_string(SYS_getppid));
  EXPECT_EQ(p->events()[1].event, "sys_enter");
  EXPECT_EQ(p->events()[1].filter, "");
  ASSERT_EQ(p->skipped().size(), 1u);
  EXPECT_NE(p->skipped()[0].find("raw_syscalls:sys_enter"), std::string::npos) << p->skipped()[0];
}

}  // namespace
}  // namespace tracekit::session
