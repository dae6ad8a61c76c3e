// UserSymbols::add_mapping: mappings learned from MMAP2 records resolve for
// processes that /proc knows nothing about. The mappings are this test's own
// (read from /proc/self/maps) added under a pid that cannot exist.
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "self_maps.hpp"
#include "symbols/mapped_files.hpp"
#include "symbols/user.hpp"

namespace mappings_test_ns {
// Called only through its address, so -O2 can neither inline nor clone it.
__attribute__((noinline)) int mapped_function(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 5 + i;
  return acc;
}
}  // namespace mappings_test_ns

namespace tracekit::symbols {
namespace {

using namespace test_support;

// Above any pid_max (at most 2^22): no process has it, now or later.
constexpr pid_t kFakePid = 1 << 30;
constexpr std::string_view kTarget = "mappings_test_ns::mapped_function(int)";

uint64_t target_addr() { return reinterpret_cast<uint64_t>(&mappings_test_ns::mapped_function); }

void add(UserSymbols& us, pid_t pid, const MapLine& m, FileIdentity id = {}) {
  us.add_mapping(pid, m.start, m.end - m.start, m.pgoff, m.path, id);
}

void* libc_symbol(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return libc ? dlsym(libc, name) : nullptr;
}

TEST(SymbolsUserMappingsTest, OwnTextResolvesUnderAPidThatDoesNotExist) {
  auto text = text_mapping(getpid(), target_addr());
  ASSERT_TRUE(text.has_value());
  UserSymbols us;
  EXPECT_FALSE(us.note_process(kFakePid));
  add(us, kFakePid, *text);
  auto r = us.lookup(kFakePid, target_addr());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, kTarget);
  EXPECT_EQ(r->offset, 0u);
  EXPECT_EQ(r->module, text->path);
  auto inside = us.lookup(kFakePid, target_addr() + 4);
  ASSERT_TRUE(inside.has_value());
  EXPECT_EQ(inside->name, kTarget);
  EXPECT_EQ(inside->offset, 4u);
  auto ret = us.lookup(kFakePid, target_addr() + 1, true);
  ASSERT_TRUE(ret.has_value());
  EXPECT_EQ(ret->name, kTarget);
  EXPECT_EQ(ret->offset, 1u);
  // Outside the mapping nothing answers: there is no /proc/PID to fall back on.
  EXPECT_FALSE(us.lookup(kFakePid, text->start - 1).has_value());
  EXPECT_FALSE(us.lookup(kFakePid, text->end).has_value());
}

// libc's text is mapped from a file offset other than 0 (pgoff != 0).
TEST(SymbolsUserMappingsTest, LibraryMappedAtAFileOffsetResolves) {
  const struct {
    const char* symbol;
    std::vector<std::string_view> names;  // aliases the lookup may pick
  } cases[] = {
      {"getpid", {"__getpid", "getpid"}},
      {"malloc", {"malloc", "__libc_malloc", "__malloc"}},
      {"write", {"write", "__write", "__libc_write"}},
  };
  UserSymbols us;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.symbol);
    void* f = libc_symbol(c.symbol);
    ASSERT_NE(f, nullptr);
    auto text = text_mapping(getpid(), reinterpret_cast<uint64_t>(f));
    ASSERT_TRUE(text.has_value());
    EXPECT_NE(text->pgoff, 0u) << "libc's text no longer starts past its first page";
    add(us, kFakePid, *text, {text->ino, {}});
    auto r = us.lookup(kFakePid, reinterpret_cast<uint64_t>(f) + 2);
    ASSERT_TRUE(r.has_value());
    EXPECT_NE(std::find(c.names.begin(), c.names.end(), r->name), c.names.end()) << r->name;
    EXPECT_EQ(r->offset, 2u);
    EXPECT_NE(r->module.find("libc.so"), std::string_view::npos) << r->module;
  }
}

TEST(SymbolsUserMappingsTest, IdentityIsChecked) {
  auto text = text_mapping(getpid(), target_addr());
  ASSERT_TRUE(text.has_value());
  const std::vector<uint8_t> build_id = own_build_id();
  ASSERT_FALSE(build_id.empty()) << "the test binary has no build-id note";
  std::vector<uint8_t> other_id = build_id;
  other_id[0] ^= 0xff;
  const struct {
    const char* what;
    FileIdentity id;
    bool resolves;
  } cases[] = {
      {"nothing given", {}, true},
      {"its inode", {text->ino, {}}, true},
      {"another inode", {text->ino + 1, {}}, false},
      {"its build-id", {0, build_id}, true},
      {"another build-id", {0, other_id}, false},
      {"a shorter build-id", {0, std::span(build_id).first(8)}, false},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    UserSymbols us;
    add(us, kFakePid, *text, c.id);
    EXPECT_EQ(us.lookup(kFakePid, target_addr()).has_value(), c.resolves);
  }
}

TEST(SymbolsUserMappingsTest, WhereAMappedFileIsRead) {
  auto paths = [](std::string_view path) {
    std::vector<std::string> out;
    for (const MappedPath& p : mapped_paths(42, 0x1000, 0x3000, path))
      out.push_back((p.live ? "live " : "") + p.path);
    return out;
  };
  EXPECT_EQ(paths("/usr/bin/x"),
            (std::vector<std::string>{"/usr/bin/x", "live /proc/42/map_files/1000-3000",
                                      "live /proc/42/root/usr/bin/x"}));
  EXPECT_EQ(paths("/usr/bin/x (deleted)"),
            (std::vector<std::string>{"live /proc/42/map_files/1000-3000"}));
  EXPECT_TRUE(paths("[vdso]").empty());
  EXPECT_TRUE(paths("//anon").empty());
  EXPECT_TRUE(paths("").empty());
}

TEST(SymbolsUserMappingsTest, PathsThatAreNoFilesResolveNothing) {
  auto text = text_mapping(getpid(), target_addr());
  ASSERT_TRUE(text.has_value());
  for (std::string_view path :
       {"//anon", "[heap]", "", "/nonexistent/tracekit-test", "/dev/null"}) {
    SCOPED_TRACE(path);
    UserSymbols us;
    us.add_mapping(kFakePid, text->start, text->end - text->start, text->pgoff, path);
    EXPECT_FALSE(us.lookup(kFakePid, target_addr()).has_value());
  }
  UserSymbols us;
  us.add_mapping(kFakePid, text->start, 0, text->pgoff, text->path);  // empty
  us.add_mapping(kFakePid, UINT64_MAX - 10, 100, 0, text->path);      // wraps
  EXPECT_FALSE(us.lookup(kFakePid, target_addr()).has_value());
}

// A newer mapping hides what it overlaps of older ones; the rest of an
// older one keeps its file offsets.
TEST(SymbolsUserMappingsTest, NewerMappingsReplaceWhatTheyOverlap) {
  auto text = text_mapping(getpid(), target_addr());
  ASSERT_TRUE(text.has_value());
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t target_page = target_addr() & ~(page - 1);
  if (target_page == text->start || target_page + page == text->end)
    GTEST_SKIP() << "the function sits on the first or last page of the text";

  UserSymbols us;
  add(us, kFakePid, *text);
  ASSERT_TRUE(us.lookup(kFakePid, target_addr()).has_value());
  // Below the function's page: the part above keeps resolving.
  us.add_mapping(kFakePid, text->start, target_page - text->start, 0, "//anon");
  auto above = us.lookup(kFakePid, target_addr() + 1);
  ASSERT_TRUE(above.has_value());
  EXPECT_EQ(above->name, kTarget);
  EXPECT_EQ(above->offset, 1u);
  EXPECT_FALSE(us.lookup(kFakePid, text->start).has_value());
  // Over the function's page: hidden.
  us.add_mapping(kFakePid, target_page, page, 0, "//anon");
  EXPECT_FALSE(us.lookup(kFakePid, target_addr() + 2).has_value());
  // The same file mapped again over it: back.
  us.add_mapping(kFakePid, target_page, page, text->pgoff + (target_page - text->start),
                 text->path);
  auto back = us.lookup(kFakePid, target_addr() + 3);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->name, kTarget);
}

// For a live process, added mappings answer before its /proc capture (and
// answers cached before the mapping was added are not reused).
TEST(SymbolsUserMappingsTest, AddedMappingsComeBeforeTheProcCapture) {
  void* getpid_fn = libc_symbol("getpid");
  ASSERT_NE(getpid_fn, nullptr);
  auto libc = text_mapping(getpid(), reinterpret_cast<uint64_t>(getpid_fn));
  ASSERT_TRUE(libc.has_value());
  UserSymbols us;
  ASSERT_TRUE(us.note_process(getpid()));
  auto before = us.lookup(getpid(), target_addr());
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->name, kTarget);
  // A mapping that is no file leaves the capture in charge.
  us.add_mapping(getpid(), target_addr() & ~0xfffULL, 4096, 0, "//anon");
  auto anon = us.lookup(getpid(), target_addr());
  ASSERT_TRUE(anon.has_value());
  EXPECT_EQ(anon->name, kTarget);
  // Claim that libc's text sits where getpid lands on our function.
  uint64_t into = reinterpret_cast<uint64_t>(getpid_fn) - libc->start;
  us.add_mapping(getpid(), target_addr() - into, libc->end - libc->start, libc->pgoff, libc->path);
  auto after = us.lookup(getpid(), target_addr());
  ASSERT_TRUE(after.has_value());
  EXPECT_TRUE(after->name == "getpid" || after->name == "__getpid") << after->name;
  EXPECT_NE(after->module.find("libc.so"), std::string_view::npos);
}

// One table per file, whichever way it was reached.
TEST(SymbolsUserMappingsTest, TablesAreSharedWithOtherProcessesAndTheProcCapture) {
  void* f = libc_symbol("getpid");
  ASSERT_NE(f, nullptr);
  auto libc = text_mapping(getpid(), reinterpret_cast<uint64_t>(f));
  ASSERT_TRUE(libc.has_value());
  UserSymbols us;
  auto own = us.lookup(getpid(), reinterpret_cast<uint64_t>(f));
  ASSERT_TRUE(own.has_value());
  add(us, kFakePid, *libc);
  add(us, kFakePid + 1, *libc);
  auto a = us.lookup(kFakePid, reinterpret_cast<uint64_t>(f));
  auto b = us.lookup(kFakePid + 1, reinterpret_cast<uint64_t>(f));
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(a->name.data(), own->name.data());
  EXPECT_EQ(b->name.data(), own->name.data());
  us.forget(getpid());
  us.forget(kFakePid);
  auto again = us.lookup(kFakePid + 1, reinterpret_cast<uint64_t>(f) + 1);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->name.data(), own->name.data());
}

TEST(SymbolsUserMappingsTest, ForgetDropsAddedMappings) {
  auto text = text_mapping(getpid(), target_addr());
  ASSERT_TRUE(text.has_value());
  UserSymbols us;
  add(us, kFakePid, *text);
  ASSERT_TRUE(us.lookup(kFakePid, target_addr()).has_value());
  us.forget(kFakePid);
  EXPECT_FALSE(us.lookup(kFakePid, target_addr()).has_value());
  // What is added after the forget counts (a new image after an exec).
  add(us, kFakePid, *text);
  EXPECT_TRUE(us.lookup(kFakePid, target_addr()).has_value());
}

TEST(SymbolsUserMappingsTest, VdsoResolvesThroughOurOwn) {
  void* vdso = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (vdso == nullptr) GTEST_SKIP() << "no vDSO";
  void* f = dlsym(vdso, "__vdso_clock_gettime");
  ASSERT_NE(f, nullptr);
  auto m = text_mapping(getpid(), reinterpret_cast<uint64_t>(f));
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->path, "[vdso]");
  UserSymbols us;
  // Another process's vDSO, at another address.
  const uint64_t elsewhere = 0x7f0000000000;
  uint64_t a = elsewhere + (reinterpret_cast<uint64_t>(f) - m->start) + 1;
  us.add_mapping(kFakePid, elsewhere, m->end - m->start, 0, "[vdso]");
  auto r = us.lookup(kFakePid, a);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->name == "__vdso_clock_gettime" || r->name == "clock_gettime") << r->name;
  EXPECT_EQ(r->offset, 1u);
  EXPECT_EQ(r->module, "[vdso]");
  // A vDSO of another size is another image (a 32-bit process's).
  us.add_mapping(kFakePid + 1, elsewhere, m->end - m->start + 4096, 0, "[vdso]");
  EXPECT_FALSE(us.lookup(kFakePid + 1, a).has_value());
}

// The file is read at the first lookup, and must still be the file that
// was there when the mapping was added.
TEST(SymbolsUserMappingsTest, FileChangedSinceAddedResolvesNothing) {
  if (access(kLib, R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  std::string copy = ::testing::TempDir() + "symbols_changed_XXXXXX";
  int fd = mkstemp(copy.data());
  ASSERT_GE(fd, 0);
  close(fd);
  ASSERT_TRUE(copy_file(kLib, copy));
  void* h = dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr);
  uint64_t f = reinterpret_cast<uint64_t>(dlsym(h, "zlibVersion"));
  auto text = text_mapping(getpid(), f);
  ASSERT_TRUE(text.has_value());

  UserSymbols same, changed;
  add(same, kFakePid, *text);
  add(changed, kFakePid, *text);
  auto r = same.lookup(kFakePid, f + 1);  // read now
  // A rebuild: same path, another mtime.
  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, copy.c_str(), times, 0), 0);
  auto after = changed.lookup(kFakePid, f + 1);
  dlclose(h);
  unlink(copy.c_str());
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_FALSE(after.has_value());
}

// A mapping of a file deleted before the record was handled: read at once
// through /proc/PID/map_files while the process lives (root only).
TEST(SymbolsUserMappingsTest, DeletedFileOfALiveProcessIsReadAtOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (/proc/PID/map_files)";
  if (access(kLib, R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  std::string dir = ::testing::TempDir();
  uint64_t a = 0;
  pid_t child =
      fork_child([&] { return load_deleted_copy(dir + "symbols_mapped_deleted_XXXXXX"); }, &a);
  ASSERT_GT(child, 0);
  ASSERT_NE(a, 0u);
  auto text = text_mapping(child, a);
  UserSymbols us;
  if (text) add(us, child, *text, {text->ino, {}});
  kill_and_reap(child);
  ASSERT_TRUE(text.has_value());
  EXPECT_NE(text->path.find(" (deleted)"), std::string::npos) << text->path;
  auto r = us.lookup(child, a + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_EQ(r->offset, 1u);
}

// A library visible only inside the child's mount namespace, as in a
// container: the path means nothing here, so it is read at once while the
// child lives.
TEST(SymbolsUserMappingsTest, FileInAnotherMountNamespaceIsReadAtOnce) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (unshare, mount)";
  if (access(kLib, R_OK) != 0) GTEST_SKIP() << kLib << " missing";
  std::string dir = ::testing::TempDir() + "symbols_mapped_ns_XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  uint64_t a = 0;
  pid_t child = fork_child([&] { return load_copy_in_own_mount_namespace(dir); }, &a);
  ASSERT_GT(child, 0);
  auto text = a ? text_mapping(child, a) : std::nullopt;
  UserSymbols us;
  if (text) add(us, child, *text, {text->ino, {}});
  kill_and_reap(child);
  rmdir(dir.c_str());
  ASSERT_NE(a, 0u) << "child could not load " << kLib << " in its own namespace";
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(text->path, dir + "/libz-copy.so");
  auto r = us.lookup(child, a + 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "zlibVersion");
  EXPECT_EQ(r->module, dir + "/libz-copy.so");
}

}  // namespace
}  // namespace tracekit::symbols
