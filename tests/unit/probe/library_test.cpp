// resolve_library against this machine: the dynamic linker's cache, PATH.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "probe/spec.hpp"

namespace tracekit::probe {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

struct Case {
  const char* lib;
  const char* suffix;  // what the resolved path ends with
};

TEST(ProbeLibraryTest, Resolves) {
  const Case cases[] = {
      {"c", "/libc.so.6"},  // not libcap, not the libc.so linker script
      {"pthread", "/libpthread.so.0"},
      {"m", "/libm.so.6"},
      {"elf", "/libelf.so.1"},  // -ldw -lelf: installed wherever this builds
      {"/bin/true", "/bin/true"},
      {"true", "/true"},  // no libtrue.so: a program on PATH
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.lib);
    auto path = resolve_library(c.lib);
    ASSERT_TRUE(path.ok()) << path.error().str();
    EXPECT_TRUE(ends_with(*path, c.suffix)) << *path;
    EXPECT_EQ(path->front(), '/') << *path;
    EXPECT_TRUE(is_elf(*path)) << *path;
  }
  // A library of this machine's ABI, not lib32's.
  auto libc = resolve_library("c");
  ASSERT_TRUE(libc.ok());
  EXPECT_EQ(libc->find("/lib32/"), std::string::npos) << *libc;
  EXPECT_EQ(*resolve_library("/bin/true"), "/bin/true");
}

TEST(ProbeLibraryTest, NotFound) {
  auto r = resolve_library("no_such_lib_xyz");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "cannot find library or program \"no_such_lib_xyz\"");
  EXPECT_FALSE(r.error().hint.empty());

  auto path = resolve_library("/no/such/file");
  ASSERT_FALSE(path.ok());
  EXPECT_EQ(path.error().message, "cannot find");
  EXPECT_EQ(path.error().path, "/no/such/file");
  EXPECT_EQ(path.error().err, ENOENT);

  auto dir = resolve_library("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.error().message, "not a regular file");

  auto empty = resolve_library("");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message, "empty library name");
}

// PATH is searched like `which` does: the first executable regular file.
TEST(ProbeLibraryTest, ProgramOnPath) {
  char tmpl[] = "/tmp/tracekit-probe-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::filesystem::create_directory(dir + "/a");
  std::filesystem::create_directory(dir + "/b");
  std::filesystem::create_directory(dir + "/a/tk_probe_prog");  // a directory: skipped
  std::ofstream(dir + "/b/tk_probe_prog") << "#!/bin/sh\n";
  chmod((dir + "/b/tk_probe_prog").c_str(), 0644);  // not executable: skipped
  std::filesystem::create_directory(dir + "/c");
  std::ofstream(dir + "/c/tk_probe_prog") << "#!/bin/sh\n";
  chmod((dir + "/c/tk_probe_prog").c_str(), 0755);

  const char* old = getenv("PATH");
  std::string saved = old ? old : "";
  setenv("PATH", (dir + "/a:" + dir + "/b:" + dir + "/c").c_str(), 1);
  auto r = resolve_library("tk_probe_prog");
  setenv("PATH", saved.c_str(), 1);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(*r, dir + "/c/tk_probe_prog");
}

TEST(ProbeLibraryTest, RelativePathBecomesAbsolute) {
  char tmpl[] = "/tmp/tracekit-probe-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::filesystem::create_directory(dir + "/sub");
  std::ofstream(dir + "/prog") << "x";
  auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  auto r = resolve_library("./prog");
  auto up = resolve_library("sub/../prog");
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(r.ok()) << r.error().str();
  EXPECT_EQ(*r, dir + "/prog");
  ASSERT_TRUE(up.ok()) << up.error().str();
  EXPECT_EQ(*up, dir + "/prog");
}

}  // namespace
}  // namespace tracekit::probe
