// Syscall names and numbers (libseccomp, this machine's architecture: the
// truths are <sys/syscall.h>'s SYS_* constants) and the raw_syscalls
// stand-in for syscall tracepoints: events to raw events and ids, the id
// filter, the names records are given back.
#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <algorithm>

#include "syscalls/raw.hpp"
#include "syscalls/table.hpp"

namespace tracekit::syscalls {
namespace {

TEST(SyscallTable, NamesAndNumbersOfThisArchitecture) {
  EXPECT_EQ(number("getppid"), SYS_getppid);
  EXPECT_EQ(number("read"), SYS_read);
  EXPECT_EQ(number("openat"), SYS_openat);
  EXPECT_EQ(name(SYS_getppid), "getppid");
  EXPECT_EQ(name(SYS_read), "read");
  EXPECT_EQ(number("no_such_syscall"), std::nullopt);
  EXPECT_EQ(number(""), std::nullopt);
  EXPECT_EQ(name(-1), "");
  EXPECT_EQ(name(kMaxNumber + 100000), "");
}

TEST(SyscallTable, AllIsByNumberAndHasEveryName) {
  const auto& t = all();
  ASSERT_GT(t.size(), 200u);
  EXPECT_TRUE(std::is_sorted(t.begin(), t.end(),
                             [](const Syscall& a, const Syscall& b) { return a.nr < b.nr; }));
  for (const Syscall& s : t) EXPECT_EQ(number(s.name), s.nr) << s.name;
  EXPECT_TRUE(std::any_of(t.begin(), t.end(), [](const Syscall& s) {
    return s.nr == SYS_getppid && s.name == "getppid";
  }));
}

TEST(RawSyscalls, EventsToRawEventsAndIds) {
  struct Case {
    const char* event;
    bool exit;
    int nr;
  };
  const Case cases[] = {
      {"sys_enter_getppid", false, SYS_getppid},
      {"sys_exit_getppid", true, SYS_getppid},
      {"sys_enter_read", false, SYS_read},
      {"sys_exit_openat", true, SYS_openat},
      // The kernel's names where they are not syscall(2)'s.
#if defined(SYS_stat) && defined(SYS_fstat)  // not on arm64
      {"sys_enter_newstat", false, SYS_stat},
      {"sys_enter_newfstat", false, SYS_fstat},
#endif
      {"sys_exit_newuname", true, SYS_uname},
      {"sys_enter_sendfile64", false, SYS_sendfile},
      {"sys_enter_umount", false, SYS_umount2},
      {"sys_enter_umount2", false, SYS_umount2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.event);
    auto r = to_raw(c.event);
    ASSERT_TRUE(r) << r.error().str();
    EXPECT_EQ(r->exit, c.exit);
    EXPECT_EQ(r->nr, c.nr);
  }
  EXPECT_EQ(raw_event(false), "sys_enter");
  EXPECT_EQ(raw_event(true), "sys_exit");
}

TEST(RawSyscalls, UnknownNamesAreClearErrors) {
  struct Case {
    const char* event;
    const char* message;
  };
  const Case cases[] = {
      {"sys_enter_no_such_call", "no system call named \"no_such_call\" on this architecture"},
      {"sys_exit_", "no system call named \"\""},
      {"sched_switch", "\"sched_switch\" is not a syscall event"},
      {"sys_enterread", "is not a syscall event"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.event);
    auto r = to_raw(c.event);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().err, 0);  // the reason is the name, not an errno
    EXPECT_NE(r.error().message.find(c.message), std::string::npos) << r.error().message;
  }
}

TEST(RawSyscalls, EventNamesBothSidesSorted) {
  auto names = event_names();
  EXPECT_EQ(names.size(), 2 * all().size());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"sys_enter_getppid", "sys_exit_getppid", "sys_enter_read"})
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), std::string(n))) << n;
}

TEST(RawSyscalls, RecordsAreNamedBackByTheirId) {
  EXPECT_EQ(event_name(false, SYS_getppid), "sys_enter_getppid");
  EXPECT_EQ(event_name(true, SYS_read), "sys_exit_read");
  EXPECT_EQ(event_name(false, 99999), "sys_enter_#99999");
  EXPECT_EQ(event_name(true, -1), "sys_exit_#-1");
}

TEST(RawSyscalls, IdFilter) {
  EXPECT_EQ(id_filter({}), "");
  EXPECT_EQ(id_filter({110}), "id == 110");
  EXPECT_EQ(id_filter({110, 39, 110}), "id == 39 || id == 110");
  EXPECT_EQ(id_filter({3, 2, 1}), "(id >= 1 && id <= 3)");
  EXPECT_EQ(id_filter({1, 2, 4, 5, 6, 9, 11, 12, 13, 14}),
            "id == 1 || id == 2 || (id >= 4 && id <= 6) || id == 9 || (id >= 11 && id <= 14)");
}

TEST(RawSyscalls, FallbackNote) {
  EXPECT_EQ(fallback_note(false),
            "this kernel has no syscalls:* tracepoints: tracing raw_syscalls with an id filter");
  EXPECT_EQ(fallback_note(true),
            "syscalls:* tracepoints turned off by TRACEKIT_KERNEL_FEATURES: tracing raw_syscalls "
            "with an id filter");
}

}  // namespace
}  // namespace tracekit::syscalls

namespace tracekit::syscalls {
namespace {

TEST(RawSyscalls, FilterHintNamesTheRawFields) {
  EXPECT_EQ(filter_hint("sys_enter"),
            "this kernel has no syscall tracepoints: the filter applies to "
            "raw_syscalls:sys_enter, whose fields are id and args (which filters cannot index)");
  EXPECT_EQ(filter_hint("sys_exit"),
            "this kernel has no syscall tracepoints: the filter applies to raw_syscalls:sys_exit, "
            "whose fields are id and ret");
}

}  // namespace
}  // namespace tracekit::syscalls
