#include "symbols/user.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "self_maps.hpp"

namespace symbols_test_ns {
// Called only through its address, so -O2 can neither inline nor clone it.
__attribute__((noinline)) int target_function(int x) {
  volatile int acc = x;  // a body long enough for the offsets tested
  for (int i = 0; i < 8; ++i) acc = acc * 3 + i;
  return acc;
}
}  // namespace symbols_test_ns

extern "C" __attribute__((noinline)) int symbols_test_plain_c_function(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc + i;
  return acc;
}

namespace tracekit::symbols {
namespace {

using namespace test_support;

uint64_t addr_of(int (*f)(int)) { return reinterpret_cast<uint64_t>(f); }

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Notes child while it lives, then kills it: what it maps is what was captured.
void note_then_reap(UserSymbols& us, pid_t child) {
  EXPECT_TRUE(us.note_process(child));
  kill_and_reap(child);
}

TEST(SymbolsUserTest, OwnFunctionResolvesDemangled) {
  UserSymbols us;
  ASSERT_TRUE(us.note_process(getpid()));
  uint64_t a = addr_of(&symbols_test_ns::target_function);
  auto r = us.lookup(getpid(), a);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "symbols_test_ns::target_function(int)");
  EXPECT_EQ(r->offset, 0u);
  auto inside = us.lookup(getpid(), a + 3);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->name, "symbols_test_ns::target_function(int)");
  EXPECT_EQ(inside->offset, 3u);
  EXPECT_FALSE(r->module.empty());
  EXPECT_EQ(r->module, inside->module);
}

TEST(SymbolsUserTest, PlainCFunctionKeepsItsName) {
  UserSymbols us;
  auto r = us.lookup(getpid(), addr_of(&symbols_test_plain_c_function) + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "symbols_test_plain_c_function");
  EXPECT_EQ(r->offset, 1u);
}

TEST(SymbolsUserTest, ReturnAddressAtStartBelongsToThePreviousFunction) {
  UserSymbols us;
  uint64_t a = addr_of(&symbols_test_ns::target_function);
  auto ret = us.lookup(getpid(), a, true);
  if (ret) {
    EXPECT_NE(ret->name, "symbols_test_ns::target_function(int)");
  }
  auto ret1 = us.lookup(getpid(), a + 1, true);
  ASSERT_TRUE(ret1.has_value());
  EXPECT_EQ(ret1->name, "symbols_test_ns::target_function(int)");
  EXPECT_EQ(ret1->offset, 1u);
  EXPECT_FALSE(us.lookup(getpid(), 0, true).has_value());
}

// With libc6-dbg installed these come from libc's separate debuginfo
// (.symtab, full of internal aliases), else from its .dynsym.
TEST(SymbolsUserTest, LibcFunctionsResolve) {
  const struct {
    const char* symbol;
    std::vector<std::string_view> names;  // aliases the lookup may pick
  } cases[] = {
      {"write", {"write"}}, {"getpid", {"__getpid", "getpid"}},  // __getpid is the global one
  };
  // libc's own, not an interposer's (a sanitizer's write, say).
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(libc, nullptr);
  UserSymbols us;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.symbol);
    void* f = dlsym(libc, c.symbol);
    ASSERT_NE(f, nullptr);
    auto r = us.lookup(getpid(), reinterpret_cast<uint64_t>(f) + 2);
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(std::find(c.names.begin(), c.names.end(), r->name), c.names.end()) << r->name;
    EXPECT_EQ(r->offset, 2u);
    EXPECT_NE(r->module.find("libc.so"), std::string_view::npos) << r->module;
  }
}

// A stripped library without debuginfo: only .dynsym names it.
TEST(SymbolsUserTest, StrippedLibraryResolvesFromDynsym) {
  void* z = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
  if (z == nullptr) GTEST_SKIP() << "no libz.so.1";
  void* f = dlsym(z, "zlibVersion");
  ASSERT_NE(f, nullptr);
  UserSymbols us;
  auto r = us.lookup(getpid(), reinterpret_cast<uint64_t>(f) + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_EQ(r->offset, 1u);
  EXPECT_NE(r->module.find("libz.so"), std::string_view::npos) << r->module;
}

TEST(SymbolsUserTest, NamesAreStableAcrossLookups) {
  UserSymbols us;
  uint64_t a = addr_of(&symbols_test_ns::target_function);
  auto first = us.lookup(getpid(), a);
  ASSERT_TRUE(first.has_value());
  for (uint64_t i = 1; i < 200; ++i) (void)us.lookup(getpid(), a + i);
  (void)us.lookup(getpid(), addr_of(&symbols_test_plain_c_function));
  auto again = us.lookup(getpid(), a + 2);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(first->name.data(), again->name.data());
  EXPECT_EQ(first->name, "symbols_test_ns::target_function(int)");
}

TEST(SymbolsUserTest, GarbageAddressesGiveNothing) {
  UserSymbols us;
  int on_stack = 0;
  const uint64_t cases[] = {
      0x10,                                   // below everything
      reinterpret_cast<uint64_t>(&on_stack),  // above the last module
      0xffffffffff600000,                     // [vsyscall]
      0xffffffff81000000,                     // kernel
      0x10,                                   // a cached miss
  };
  for (uint64_t a : cases) EXPECT_FALSE(us.lookup(getpid(), a).has_value()) << std::hex << a;
}

// An anonymous mapping (JIT code) resolves through /tmp/perf-PID.map.
TEST(SymbolsUserTest, AnonymousMemoryResolvesThroughPerfMap) {
  void* mem = mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  uint64_t a = reinterpret_cast<uint64_t>(mem);
  std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
  {
    std::ofstream out(path);
    out << std::hex << a << " 100 Interpreter::jitted(int) [jit]\n";
  }
  UserSymbols us;
  auto r = us.lookup(getpid(), a + 0x10);
  auto past = us.lookup(getpid(), a + 0x100);
  std::remove(path.c_str());
  munmap(mem, 4096);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "Interpreter::jitted(int) [jit]");
  EXPECT_EQ(r->offset, 0x10u);
  EXPECT_EQ(r->module, path);
  EXPECT_FALSE(past.has_value());
}

TEST(SymbolsUserTest, GoneProcessCannotBeNoted) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  UserSymbols us;
  EXPECT_FALSE(us.note_process(pid));
  EXPECT_FALSE(us.note_process(pid));  // the first answer sticks
  EXPECT_FALSE(us.lookup(pid, addr_of(&symbols_test_ns::target_function)).has_value());
}

// Noted while alive, looked up after exit: what report time sees.
TEST(SymbolsUserTest, ExitedChildStillResolves) {
  pid_t child = fork_parked_child();
  ASSERT_GT(child, 0);
  UserSymbols us;
  note_then_reap(us, child);
  ASSERT_NE(kill(child, 0), 0);

  auto r = us.lookup(child, addr_of(&symbols_test_ns::target_function) + 5);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "symbols_test_ns::target_function(int)");
  EXPECT_EQ(r->offset, 5u);
  void* f = dlsym(dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), "getpid");
  auto libc = us.lookup(child, reinterpret_cast<uint64_t>(f));
  ASSERT_TRUE(libc.has_value());
  EXPECT_NE(libc->module.find("libc.so"), std::string_view::npos);
}

// The vDSO exists only in process memory, so it must be captured at note time.
TEST(SymbolsUserTest, ExitedChildVdsoStillResolves) {
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO";
  void* f = dlsym(vdso, "__vdso_clock_gettime");
  ASSERT_NE(f, nullptr);
  uint64_t a = reinterpret_cast<uint64_t>(f) + 1;

  UserSymbols self;
  auto mine = self.lookup(getpid(), a);
  ASSERT_TRUE(mine.has_value());
  EXPECT_TRUE(mine->name == "__vdso_clock_gettime" || mine->name == "clock_gettime") << mine->name;
  EXPECT_EQ(mine->module, "[vdso]");

  pid_t child = fork_parked_child();
  ASSERT_GT(child, 0);
  UserSymbols us;
  note_then_reap(us, child);
  auto r = us.lookup(child, a);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, mine->name);
  EXPECT_EQ(r->offset, 1u);
  EXPECT_EQ(r->module, "[vdso]");
}

// Two processes mapping the same files share one symbol table; forgetting
// one leaves the other's names intact.
TEST(SymbolsUserTest, ProcessesShareSymbolTables) {
  pid_t a = fork_parked_child();
  ASSERT_GT(a, 0);
  pid_t b = fork_parked_child();
  ASSERT_GT(b, 0);
  UserSymbols us;
  EXPECT_TRUE(us.note_process(a));
  EXPECT_TRUE(us.note_process(b));
  kill_and_reap(a);
  kill_and_reap(b);
  uint64_t f = addr_of(&symbols_test_ns::target_function);
  auto ra = us.lookup(a, f + 1);
  auto rb = us.lookup(b, f + 2);
  ASSERT_TRUE(ra.has_value());
  ASSERT_TRUE(rb.has_value());
  EXPECT_EQ(ra->name.data(), rb->name.data());
  us.forget(a);
  EXPECT_EQ(rb->name, "symbols_test_ns::target_function(int)");
  auto again = us.lookup(b, f + 3);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->name.data(), rb->name.data());
  EXPECT_EQ(again->offset, 3u);
}

TEST(SymbolsUserTest, ForgetDropsTheProcess) {
  pid_t child = fork_parked_child();
  ASSERT_GT(child, 0);
  UserSymbols us;
  note_then_reap(us, child);
  uint64_t a = addr_of(&symbols_test_ns::target_function);
  EXPECT_TRUE(us.lookup(child, a).has_value());
  us.forget(child);
  // Noted again, from a process that is gone now.
  EXPECT_FALSE(us.lookup(child, a).has_value());
  EXPECT_FALSE(us.note_process(child));
}

// Reached only through /proc/PID/map_files, which needs root.
TEST(SymbolsUserTest, ExitedChildDeletedLibraryStillResolves) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (/proc/PID/map_files)";
  if (access(kLib, R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  std::string dir = ::testing::TempDir();
  uint64_t a = 0;
  pid_t child = fork_child([&] { return load_deleted_copy(dir + "symbols_deleted_XXXXXX"); }, &a);
  ASSERT_GT(child, 0);
  UserSymbols us;
  note_then_reap(us, child);
  ASSERT_NE(a, 0u) << "child could not load a deleted copy of " << kLib;
  auto r = us.lookup(child, a + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_EQ(r->offset, 1u);
  EXPECT_TRUE(ends_with(r->module, " (deleted)")) << r->module;
}

// A library visible only inside the child's mount namespace, as in a
// container: reached through /proc/PID/root while the child lives.
TEST(SymbolsUserTest, ExitedChildInOtherMountNamespaceStillResolves) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (unshare, mount)";
  if (access(kLib, R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  std::string dir = ::testing::TempDir() + "symbols_ns_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  uint64_t a = 0;
  pid_t child = fork_child([&] { return load_copy_in_own_mount_namespace(dir); }, &a);
  ASSERT_GT(child, 0);
  UserSymbols us;
  note_then_reap(us, child);
  rmdir(dir.c_str());
  ASSERT_NE(a, 0u) << "child could not load " << kLib << " in its own namespace";
  auto r = us.lookup(child, a + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_EQ(r->module, dir + "/libz-copy.so");
}

}  // namespace
}  // namespace tracekit::symbols
