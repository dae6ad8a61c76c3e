// MappingTable against this test's own process: the mappings of a function
// in the test binary and of a libc function, checked against
// /proc/self/maps and the files' build-ids as elfutils reads them; and
// kernel images from a small kallsyms.
#include "report/mapping_table.hpp"

#include <dlfcn.h>
#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "../symbols/self_maps.hpp"
#include "symbols/build_id.hpp"

namespace mapping_table_test_ns {
__attribute__((noinline)) int own_function(int x) {
  volatile int acc = x;
  for (int i = 0; i < 4; ++i) acc = acc * 3 + i;
  return acc;
}
}  // namespace mapping_table_test_ns

namespace tracekit::report {
namespace {

using namespace symbols::test_support;

uint64_t own_addr() { return reinterpret_cast<uint64_t>(&mapping_table_test_ns::own_function); }

uint64_t libc_addr(const char* name) {
  void* libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<uint64_t>(libc ? dlsym(libc, name) : nullptr);
}

// The build-id of the file at path as elfutils reads it, hex.
std::string file_build_id(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "?";
  elf_version(EV_CURRENT);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  const void* bits = nullptr;
  ssize_t n = elf ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
  std::string out = n > 0 ? symbols::hex_string(std::span(static_cast<const uint8_t*>(bits),
                                                          static_cast<size_t>(n)))
                          : "?";
  if (elf) elf_end(elf);
  close(fd);
  return out;
}

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

bool is_hex40(const std::string& s) {
  return s.size() == 40 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

void expect_mapping(const Mapping& m, const MapLine& line) {
  EXPECT_EQ(m.start, line.start);
  EXPECT_EQ(m.limit, line.end);
  EXPECT_EQ(m.offset, line.pgoff);
  EXPECT_EQ(m.file, line.path);
  EXPECT_FALSE(m.kernel);
}

TEST(ReportMappingTableTest, OwnProcessFromProcMaps) {
  uint32_t pid = static_cast<uint32_t>(getpid());
  symbols::UserSymbols us;
  MappingTable t(nullptr, &us);
  auto exe_line = text_mapping(getpid(), own_addr());
  uint64_t getpid_addr = libc_addr("getpid");
  ASSERT_NE(getpid_addr, 0u);
  auto libc_line = text_mapping(getpid(), getpid_addr);
  ASSERT_TRUE(exe_line && libc_line);

  int32_t exe = t.user(pid, own_addr());
  int32_t libc = t.user(pid, getpid_addr);
  ASSERT_EQ(exe, 0);
  ASSERT_EQ(libc, 1);
  // Stable: the same mapping is one index, whatever the address in it.
  EXPECT_EQ(t.user(pid, own_addr() + 4), exe);
  EXPECT_EQ(t.user(pid, libc_addr("write")), libc);
  EXPECT_EQ(t.user(pid, own_addr()), exe);

  std::vector<Mapping> maps = t.take();
  ASSERT_EQ(maps.size(), 2u);
  expect_mapping(maps[0], *exe_line);
  expect_mapping(maps[1], *libc_line);
  EXPECT_EQ(maps[0].file, self_exe());
  EXPECT_NE(maps[1].offset, 0u);  // libc's text is not at the file's start
  EXPECT_TRUE(is_hex40(maps[0].build_id)) << maps[0].build_id;
  EXPECT_EQ(maps[0].build_id, symbols::hex_string(own_build_id()));
  EXPECT_EQ(maps[0].build_id, file_build_id(maps[0].file));
  EXPECT_TRUE(is_hex40(maps[1].build_id)) << maps[1].build_id;
  EXPECT_EQ(maps[1].build_id, file_build_id(maps[1].file));
  // take() empties the table.
  EXPECT_TRUE(t.take().empty());
}

TEST(ReportMappingTableTest, OneFileInTwoProcessesIsTwoMappings) {
  pid_t child = fork_parked_child();
  ASSERT_GT(child, 0);
  symbols::UserSymbols us;
  MappingTable t(nullptr, &us);
  int32_t mine = t.user(static_cast<uint32_t>(getpid()), own_addr());
  int32_t theirs = t.user(static_cast<uint32_t>(child), own_addr());
  kill_and_reap(child);
  ASSERT_GE(mine, 0);
  ASSERT_GE(theirs, 0);
  EXPECT_NE(mine, theirs);
  auto maps = t.take();
  EXPECT_EQ(maps[static_cast<size_t>(mine)].file, maps[static_cast<size_t>(theirs)].file);
  EXPECT_EQ(maps[static_cast<size_t>(mine)].build_id, maps[static_cast<size_t>(theirs)].build_id);
}

// Above any pid_max: only added mappings answer for it.
constexpr uint32_t kFakePid = 1u << 30;

TEST(ReportMappingTableTest, AddedMappingsGiveTheRecordsBuildIdElseTheFiles) {
  auto exe_line = text_mapping(getpid(), own_addr());
  uint64_t getpid_addr = libc_addr("getpid");
  auto libc_line = text_mapping(getpid(), getpid_addr);
  ASSERT_TRUE(exe_line && libc_line);
  symbols::UserSymbols us;
  const uint8_t given[20] = {0xde, 0xad, 0xbe, 0xef};
  us.add_mapping(static_cast<pid_t>(kFakePid), exe_line->start, exe_line->end - exe_line->start,
                 exe_line->pgoff, exe_line->path, {0, std::span(given)});
  us.add_mapping(static_cast<pid_t>(kFakePid), libc_line->start, libc_line->end - libc_line->start,
                 libc_line->pgoff, libc_line->path);
  MappingTable t(nullptr, &us);
  EXPECT_EQ(t.user(kFakePid, own_addr()), 0);
  EXPECT_EQ(t.user(kFakePid, getpid_addr), 1);
  EXPECT_EQ(t.user(kFakePid, exe_line->start - 1), -1);  // nothing there, no /proc to ask
  auto maps = t.take();
  ASSERT_EQ(maps.size(), 2u);
  expect_mapping(maps[0], *exe_line);
  EXPECT_EQ(maps[0].build_id, "deadbeef00000000000000000000000000000000");
  expect_mapping(maps[1], *libc_line);
  EXPECT_EQ(maps[1].build_id, file_build_id(libc_line->path));
}

TEST(ReportMappingTableTest, NoFileNoMapping) {
  void* anon = mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(anon, MAP_FAILED);
  symbols::UserSymbols us;
  MappingTable t(nullptr, &us);
  EXPECT_EQ(t.user(static_cast<uint32_t>(getpid()), reinterpret_cast<uint64_t>(anon)), -1);
  munmap(anon, 4096);
  EXPECT_EQ(t.user(kFakePid, own_addr()), -1);
  MappingTable none(nullptr, nullptr);
  EXPECT_EQ(none.user(static_cast<uint32_t>(getpid()), own_addr()), -1);
  EXPECT_EQ(none.kernel(0xffffffff81000000), -1);
  EXPECT_TRUE(t.take().empty());
}

TEST(ReportMappingTableTest, KernelImages) {
  symbols::KernelSymbols ks = symbols::KernelSymbols::parse(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 T do_one\n"
      "ffffffff81000500 T _etext\n"
      "ffffffffc0001000 t mod_fn1\t[no_such_mod_x]\n"
      "ffffffffc0001100 t mod_fn2\t[no_such_mod_x]\n"
      "ffffffffc0003000 t other_fn\t[no_such_mod_y]\n");
  MappingTable t(&ks, nullptr);
  EXPECT_EQ(t.kernel(0xffffffff81000104), 0);
  EXPECT_EQ(t.kernel(0xffffffffc0001104), 1);
  EXPECT_EQ(t.kernel(0xffffffff81000000), 0);
  EXPECT_EQ(t.kernel(0xffffffffc0001000), 1);
  EXPECT_EQ(t.kernel(0xffffffff81000500), -1);  // past _etext
  EXPECT_EQ(t.kernel(0xffffffff80000000), -1);  // below everything
  EXPECT_EQ(t.user(1, 0x1000), -1);             // no user symbols given
  auto maps = t.take();
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[0].file, "[kernel.kallsyms]");
  EXPECT_EQ(maps[0].start, 0xffffffff81000000u);
  EXPECT_EQ(maps[0].limit, 0xffffffff81000500u);
  EXPECT_EQ(maps[0].offset, 0u);
  EXPECT_EQ(maps[0].build_id, symbols::kernel_build_id());  // this host's kernel
  EXPECT_TRUE(maps[0].kernel);
  EXPECT_EQ(maps[1].file, "[no_such_mod_x]");
  EXPECT_EQ(maps[1].start, 0xffffffffc0001000u);
  EXPECT_EQ(maps[1].limit, 0xffffffffc0003000u);
  EXPECT_EQ(maps[1].build_id, "");  // no such module loaded
  EXPECT_TRUE(maps[1].kernel);
}

}  // namespace
}  // namespace tracekit::report
