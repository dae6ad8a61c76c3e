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
  auto plan = plan_uprobes(kOpens, "/lib/libc.so.6", libc, false);
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
  EXPECT_FALSE(plan_uprobes(kOpens, "/lib/libc.so.6", {libc.back()}, false));
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
