// The pure half of session/syscall_strings: fetch arguments by calling
// convention, the plans of each way, and the per-thread pairing.
#include "session/syscall_strings.hpp"

#include <gtest/gtest.h>

namespace tracekit::session {
namespace {

const std::vector<SyscallString> kOpens = {{"openat", 1, "filename"}, {"open", 0, "filename"}};

TEST(SyscallStringsTest, KprobeFetchBehindPtRegsOrInRegisters) {
  EXPECT_EQ(kprobe_string_fetch(1, true, true), "+0(+104(%di)):ustring");
  EXPECT_EQ(kprobe_string_fetch(0, true, false), "+0(+112(%di)):string");
  EXPECT_EQ(kprobe_string_fetch(3, true, true), "+0(+56(%di)):ustring");  // r10
  EXPECT_EQ(kprobe_string_fetch(1, false, true), "+0(%si):ustring");
  EXPECT_EQ(kprobe_string_fetch(3, false, false), "+0(%cx):string");  // C ABI
  EXPECT_EQ(kprobe_string_fetch(6, true, true), "");
  EXPECT_EQ(uprobe_string_fetch(0), "+0(%di):string");
  EXPECT_EQ(uprobe_string_fetch(1), "+0(%si):string");
}

TEST(SyscallStringsTest, KprobePlanPrefersTheX64Wrappers) {
  // Sorted, as probe::kernel_functions gives them.
  auto plan = plan_kprobes(kOpens, {"__x64_sys_openat", "sys_open", "sys_openat"}, true, true);
  ASSERT_TRUE(plan) << plan.error().str();
  ASSERT_EQ(plan->entries.size(), 2u);
  EXPECT_EQ(plan->entries[0].function, "__x64_sys_openat");
  EXPECT_EQ(plan->entries[0].event_name, "c0_openat");
  EXPECT_EQ(plan->entries[0].fetchargs, "filename=+0(+104(%di)):ustring comm=$comm");
  EXPECT_EQ(plan->entries[1].function, "sys_open");
  EXPECT_EQ(plan->entries[1].fetchargs, "filename=+0(%di):ustring comm=$comm");
  EXPECT_EQ(plan->how, "kprobes on __x64_sys_openat, sys_open");
  EXPECT_FALSE(plan_kprobes(kOpens, {"vfs_read"}, true, true));
}

// Before 4.17 available_filter_functions lists the entry points by their
// SyS_ alias (4.4: SyS_openat, SyS_open, SyS_execve), the arguments in
// registers: SyS_ is taken before sys_.
TEST(SyscallStringsTest, KprobePlanSyS) {
  auto plan = plan_kprobes(kOpens, {"SyS_open", "SyS_openat", "do_sys_open"}, false, false);
  ASSERT_TRUE(plan) << plan.error().str();
  ASSERT_EQ(plan->entries.size(), 2u);
  EXPECT_EQ(plan->entries[0].function, "SyS_openat");
  EXPECT_EQ(plan->entries[0].fetchargs, "filename=+0(%si):string");
  EXPECT_EQ(plan->entries[1].function, "SyS_open");
  EXPECT_EQ(plan->entries[1].fetchargs, "filename=+0(%di):string");
  EXPECT_EQ(plan->how, "kprobes on SyS_openat, SyS_open");
  auto both = plan_kprobes(kOpens, {"SyS_openat", "sys_open", "sys_openat"}, false, false);
  ASSERT_TRUE(both);
  EXPECT_EQ(both->entries[0].function, "SyS_openat");
  EXPECT_EQ(both->entries[1].function, "sys_open");
}

TEST(SyscallStringsTest, EprobePlan) {
  auto plan = plan_eprobes({kOpens[0]}, false, false);
  ASSERT_EQ(plan.entries.size(), 1u);
  EXPECT_EQ(plan.entries[0].kind, probe::Kind::kEventProbe);
  EXPECT_EQ(plan.entries[0].system, "syscalls");
  EXPECT_EQ(plan.entries[0].event, "sys_enter_openat");
  EXPECT_EQ(plan.entries[0].fetchargs, "filename=+0($filename):string");
  EXPECT_EQ(plan.how, "eprobes on syscalls:sys_enter_openat");
}

TEST(SyscallStringsTest, UprobePlanOnePerAddress) {
  std::vector<probe::ElfFunction> libc = {{"open64", 0x100, 0xf7fc0, 10, 2, false},
                                          {"open", 0x100, 0xf7fc0, 10, 2, false},
                                          {"openat", 0x200, 0xf8150, 10, 2, false},
                                          {"__open_2", 0x300, 0xf7f90, 10, 1, false},
                                          {"read", 0x400, 0xf82a0, 10, 1, false}};
  auto plan = plan_uprobes(kOpens, "/lib/libc.so.6", libc, false, UprobeEvents::kEach);
  ASSERT_TRUE(plan) << plan.error().str();
  ASSERT_EQ(plan->entries.size(), 3u);
  EXPECT_EQ(plan->entries[0].function, "open");  // the table's order, the alias once
  EXPECT_EQ(plan->entries[0].offset, 0xf7fc0u);
  EXPECT_EQ(plan->entries[0].fetchargs, "filename=+0(%di):string");
  EXPECT_EQ(plan->entries[1].function, "__open_2");
  EXPECT_EQ(plan->entries[2].function, "openat");
  EXPECT_EQ(plan->entries[2].fetchargs, "filename=+0(%si):string");
  EXPECT_EQ(plan->entries[2].event_name, "c0_openat");
  EXPECT_EQ(plan->how, "uprobes on /lib/libc.so.6 (open, __open_2, openat)");
  EXPECT_FALSE(plan_uprobes(kOpens, "/lib/libc.so.6", {libc.back()}, false, UprobeEvents::kEach));
}

std::vector<probe::ElfFunction> libc_opens() {
  return {{"open64", 0x100, 0xf7fc0, 10, 2, false}, {"openat", 0x200, 0xf8150, 10, 2, false}};
}

TEST(SyscallStringsTest, UprobePlanSharedEventPerCall) {
  const auto libc = libc_opens();
  auto plan = plan_uprobes(kOpens, "/lib/libc.so.6", libc, true, UprobeEvents::kPerCall);
  ASSERT_TRUE(plan) << plan.error().str();
  ASSERT_EQ(plan->entries.size(), 2u);
  for (const auto& t : plan->entries) {
    EXPECT_EQ(t.event_name, "c0_openat");  // the call's name, for every wrapper of it
    EXPECT_TRUE(t.shared_event);
  }
  EXPECT_EQ(plan->entries[0].fetchargs, "filename=+0(%di):string comm=$comm");
  EXPECT_EQ(plan->entries[1].fetchargs, "filename=+0(%si):string comm=$comm");
  auto own = plan_uprobes(kOpens, "/lib/libc.so.6", libc, true, UprobeEvents::kEach);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->entries[0].event_name, "c0_open64");
  EXPECT_FALSE(own->entries[0].shared_event);
}

TEST(SyscallStringsTest, UprobePlanOneEventForAllCalls) {
  std::vector<probe::ElfFunction> libc = {{"execve", 0x100, 0xe4f00, 10, 2, false},
                                          {"execveat", 0x200, 0xe5100, 10, 2, false}};
  const std::vector<SyscallString> execs = {{"execve", 1, "argv", 1}, {"execveat", 2, "argv", 1}};
  auto plan = plan_uprobes(execs, "/lib/libc.so.6", libc, false, UprobeEvents::kOne);
  ASSERT_TRUE(plan) << plan.error().str();
  ASSERT_EQ(plan->entries.size(), 2u);
  EXPECT_EQ(plan->entries[0].event_name, "c0_calls");
  EXPECT_EQ(plan->entries[1].event_name, "c0_calls");
  EXPECT_EQ(plan->entries[0].fetchargs, "argv0=+0(+0(%si)):string tk_call=\\0:u16");
  EXPECT_EQ(plan->entries[1].fetchargs, "argv0=+0(+0(%dx)):string tk_call=\\1:u16");
  // Fields named differently: one event per call.
  const std::vector<SyscallString> mixed = {{"execve", 1, "argv", 1}, {"execveat", 1, "filename"}};
  auto per_call = plan_uprobes(mixed, "/lib/libc.so.6", libc, false, UprobeEvents::kOne);
  ASSERT_TRUE(per_call);
  EXPECT_EQ(per_call->entries[0].event_name, "c0_execve");
  EXPECT_EQ(per_call->entries[1].event_name, "c1_execveat");
  // The probes of one call only: its own event, no call field.
  auto opens = plan_uprobes(kOpens, "/lib/libc.so.6", libc_opens(), false, UprobeEvents::kOne);
  ASSERT_TRUE(opens);
  EXPECT_EQ(opens->entries[0].event_name, "c0_openat");
  EXPECT_EQ(opens->entries[0].fetchargs, "filename=+0(%di):string");
}

TEST(SyscallStringsTest, PairingPerThread) {
  CallPairing p;
  EXPECT_FALSE(p.exit(7, 1, 3));  // no entry
  p.entry(7, 0, "/etc/a", "cat");
  p.entry(8, 1, "/etc/b", "");
  p.entry(7, 0, "/etc/c", "cat");  // a second entry of the same call replaces it
  auto c = p.exit(7, 100, -2);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->str, "/etc/c");
  EXPECT_EQ(c->comm, "cat");
  EXPECT_EQ(c->ret, -2);
  EXPECT_EQ(c->ts, 100u);
  EXPECT_FALSE(p.exit(7, 101, 3));  // used up
  auto d = p.exit(8, 102, 4);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->call, 1u);
  EXPECT_EQ(d->str, "/etc/b");
  EXPECT_EQ(p.pending(), 0u);
}

TEST(SyscallStringsTest, WrapperTable) {
  EXPECT_EQ(libc_wrappers("open").size(), libc_wrappers("openat").size());
  EXPECT_TRUE(libc_wrappers("read").empty());
  EXPECT_EQ(path_name(StringPath::kEprobe), "eprobes");
}

}  // namespace
}  // namespace tracekit::session

namespace tracekit::session {
namespace {

// An argument vector: one string per element, behind the array's pointer
// (a user read "+u" where the kernel has ustring).
const std::vector<SyscallString> kExecs = {{"execve", 1, "argv", 2}, {"execveat", 2, "argv", 2}};

TEST(SyscallStringsTest, ArgvFetchPerElement) {
  EXPECT_EQ(kprobe_string_fetch(1, true, true, 2), "+0(+u16(+104(%di))):ustring");
  EXPECT_EQ(kprobe_string_fetch(1, true, false, 0), "+0(+0(+104(%di))):string");
  EXPECT_EQ(kprobe_string_fetch(1, false, true, 1), "+0(+u8(%si)):ustring");
  EXPECT_EQ(uprobe_string_fetch(1, 0), "+0(+0(%si)):string");
  EXPECT_EQ(uprobe_string_fetch(2, 3), "+0(+24(%dx)):string");
  EXPECT_EQ(eprobe_string_fetch("argv", true, 1), "+0(+u8($argv)):ustring");
  EXPECT_EQ(eprobe_string_fetch("filename", false), "+0($filename):string");
}

TEST(SyscallStringsTest, ArgvPlans) {
  auto k = plan_kprobes(kExecs, {"__x64_sys_execve", "__x64_sys_execveat"}, true, false);
  ASSERT_TRUE(k) << k.error().str();
  ASSERT_EQ(k->entries.size(), 2u);
  EXPECT_EQ(k->entries[0].fetchargs,
            "argv0=+0(+u0(+104(%di))):ustring argv1=+0(+u8(+104(%di))):ustring");
  EXPECT_EQ(k->entries[1].fetchargs,
            "argv0=+0(+u0(+96(%di))):ustring argv1=+0(+u8(+96(%di))):ustring");
  auto e = plan_eprobes({kExecs[0]}, false, false);
  EXPECT_EQ(e.entries[0].fetchargs, "argv0=+0(+0($argv)):string argv1=+0(+8($argv)):string");
  std::vector<probe::ElfFunction> libc = {{"execve", 0x100, 0xe4f00, 10, 2, false},
                                          {"execveat", 0x200, 0xe5100, 10, 2, false},
                                          {"fexecve", 0x300, 0xe4f40, 10, 2, false}};
  auto u = plan_uprobes(kExecs, "/lib/libc.so.6", libc, false, UprobeEvents::kEach);
  ASSERT_TRUE(u) << u.error().str();
  ASSERT_EQ(u->entries.size(), 3u);
  EXPECT_EQ(u->entries[0].fetchargs, "argv0=+0(+0(%si)):string argv1=+0(+8(%si)):string");
  EXPECT_EQ(u->entries[1].fetchargs, "argv0=+0(+0(%dx)):string argv1=+0(+8(%dx)):string");
  EXPECT_EQ(u->entries[2].function, "fexecve");  // fexecve(fd, argv, envp)
  EXPECT_EQ(u->entries[2].event_name, "c1_fexecve");
  EXPECT_EQ(u->entries[2].fetchargs, "argv0=+0(+0(%si)):string argv1=+0(+8(%si)):string");
  // Without a vector, fexecve has no path string: not probed.
  auto paths = plan_uprobes({{"execveat", 1, "filename"}}, "/lib/libc.so.6", libc, false, UprobeEvents::kEach);
  ASSERT_TRUE(paths);
  ASSERT_EQ(paths->entries.size(), 1u);
  EXPECT_EQ(paths->entries[0].fetchargs, "filename=+0(%si):string");
}

TEST(SyscallStringsTest, TakeRemovesTheEntry) {
  CallPairing p;
  SyscallCall c;
  c.tid = 7;
  c.ts = 5;
  c.argv = {"ls", "-l"};
  p.entry(c);
  auto t = p.take(7);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->argv, (std::vector<std::string>{"ls", "-l"}));
  EXPECT_EQ(t->ts, 5u);
  EXPECT_FALSE(p.take(7));
  EXPECT_FALSE(p.exit(7, 9, 0));  // its exit finds nothing left
}

}  // namespace
}  // namespace tracekit::session

namespace tracekit::session {
namespace {

// A uprobe on the wrapper read the whole vector; the kprobe at the system
// call's entry, which cannot fault pages in, read less: the longer stays.
TEST(SyscallStringsTest, PairingKeepsTheLongerVectorOfTheSameCall) {
  CallPairing p;
  SyscallCall u, k, other;
  u.tid = k.tid = other.tid = 7;
  u.argv = {"ls", "-l", "/etc"};
  k.ts = 9;
  k.argv = {"ls"};
  p.entry(u);
  p.entry(k);
  auto c = p.take(7);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->argv, (std::vector<std::string>{"ls", "-l", "/etc"}));
  EXPECT_EQ(c->ts, 9u);
  // Another call (execveat after execve) replaces it whole.
  p.entry(u);
  other.call = 1;
  other.argv = {"x"};
  p.entry(other);
  EXPECT_EQ(p.take(7)->argv, (std::vector<std::string>{"x"}));
}

}  // namespace
}  // namespace tracekit::session
