#include "symbols/function_table.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "symbols/dwfl_session.hpp"
#include "symbols/symbol.hpp"

namespace function_table_test_ns {
// Called only through its address, so -O2 can neither inline nor clone it.
__attribute__((noinline)) int table_function(int x) {
  volatile int acc = x;
  for (int i = 0; i < 8; ++i) acc = acc * 7 + i;
  return acc;
}
}  // namespace function_table_test_ns

namespace tracekit::symbols {
namespace {

struct Case {
  uint64_t rel;
  const char* name;  // nullptr: nullopt expected
  uint64_t start;
};

void check(FunctionTable& t, const Case& c) {
  SCOPED_TRACE(testing::Message() << std::hex << c.rel);
  auto f = t.find(c.rel);
  if (c.name == nullptr) {
    EXPECT_FALSE(f.has_value()) << f->name;
    return;
  }
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, c.name);
  EXPECT_EQ(f->rel_start, c.start);
}

TEST(SymbolsFunctionTableTest, FindsTheFunctionHoldingAnAddress) {
  FunctionTable t;
  // Added out of order.
  t.add(0x2000, 0x2040, true, "b", 0);
  t.add(0x1000, 0x1100, true, "a", 0);
  t.add(0x3000, 0x3800, false, "label_to_section_end", 0);
  t.add(0x4000, UINT64_MAX, false, "label_without_end", 0);
  t.finish();
  EXPECT_EQ(t.size(), 4u);
  const Case cases[] = {
      {0xfff, nullptr, 0},
      {0x1000, "a", 0x1000},
      {0x10ff, "a", 0x1000},
      {0x1100, nullptr, 0},  // past a's end: padding, or code no symbol describes
      {0x2020, "b", 0x2000},
      {0x37ff, "label_to_section_end", 0x3000},
      {0x3800, nullptr, 0},
      {0xffffffff, "label_without_end", 0x4000},
  };
  for (const Case& c : cases) check(t, c);
}

TEST(SymbolsFunctionTableTest, OneNamePerAddress) {
  const int global = alias_rank(elf_binding_preference(STB_GLOBAL), "write");
  const int weak = alias_rank(elf_binding_preference(STB_WEAK), "write");
  const int underscores = alias_rank(elf_binding_preference(STB_GLOBAL), "__write");
  FunctionTable t;
  // The lowest rank wins, wherever it was added.
  t.add(0x1000, 0x1010, true, "weak", weak);
  t.add(0x1000, 0x1010, true, "global", global);
  t.add(0x1000, 0x1010, true, "__global", underscores);
  // Among equal ranks a sized symbol wins, then the first added.
  t.add(0x2000, UINT64_MAX, false, "label", global);
  t.add(0x2000, 0x2010, true, "sized_first", global);
  t.add(0x2000, 0x2010, true, "sized_second", global);
  t.finish();
  EXPECT_EQ(t.size(), 2u);
  check(t, {0x1008, "global", 0x1000});
  check(t, {0x2008, "sized_first", 0x2000});
}

// A loop label inside a sized function would steal the rest of it.
TEST(SymbolsFunctionTableTest, LabelsInsideSizedFunctionsAreDropped) {
  FunctionTable t;
  t.add(0x1000, 0x1100, true, "function", 0);
  t.add(0x1040, 0x2000, false, ".Lloop", 0);
  t.add(0x1100, 0x2000, false, "after", 0);
  t.finish();
  EXPECT_EQ(t.size(), 2u);
  check(t, {0x1080, "function", 0x1000});
  check(t, {0x1100, "after", 0x1100});
}

TEST(SymbolsFunctionTableTest, NamesAreDemangledOnceAndStable) {
  FunctionTable t;
  t.add(0x1000, 0x1010, true, "_Z3fooi", 0);
  t.add(0x2000, 0x2010, true, "plain_c", 0);
  t.add(0x3000, 0x3010, true, "_Znot_a_mangled_name", 0);
  t.finish();
  auto a = t.find(0x1000), b = t.find(0x1008);
  ASSERT_TRUE(a.has_value());
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(a->name, "foo(int)");
  EXPECT_EQ(a->name.data(), b->name.data());
  check(t, {0x2000, "plain_c", 0x2000});
  check(t, {0x3000, "_Znot_a_mangled_name", 0x3000});
}

TEST(SymbolsFunctionTableTest, EmptyTableFindsNothing) {
  FunctionTable t;
  t.finish();
  EXPECT_EQ(t.size(), 0u);
  EXPECT_FALSE(t.find(0).has_value());
  EXPECT_FALSE(t.find(UINT64_MAX).has_value());
}

// The load address of the main program: its ELF addresses are relative to it.
uint64_t own_load_base() {
  uint64_t base = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* arg) -> int {
        *static_cast<uint64_t*>(arg) = info->dlpi_addr;
        return 1;  // the main program comes first
      },
      &base);
  return base;
}

// This test binary, read through a one-file libdwfl session: its functions
// by ELF address, one table per file key.
TEST(SymbolsFunctionTableTest, OwnBinaryThroughTablesSharedByFile) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  struct stat st;
  ASSERT_EQ(fstat(fd, &st), 0);
  FileSession s = report_file("unit_tests", "/proc/self/exe", fd);
  ASSERT_NE(s.module, nullptr);
  GElf_Addr bias = 0;
  ASSERT_NE(dwfl_module_getelf(s.module, &bias), nullptr);

  FunctionTables tables;
  auto t = tables.of(s.module, bias, key_of(st));
  ASSERT_NE(t, nullptr);
  EXPECT_GT(t->size(), 100u);
  uint64_t elf_addr =
      reinterpret_cast<uint64_t>(&function_table_test_ns::table_function) - own_load_base();
  auto f = t->find(elf_addr + 2);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->name, "function_table_test_ns::table_function(int)");
  EXPECT_EQ(f->rel_start, elf_addr);

  EXPECT_EQ(tables.of(s.module, bias, key_of(st)), t);    // shared while in use
  EXPECT_NE(tables.of(s.module, bias, std::nullopt), t);  // no key: the caller's own
  tables.drop_unused(key_of(st));
  EXPECT_EQ(tables.of(s.module, bias, key_of(st)), t);  // still in use: kept
  t.reset();
  tables.drop_unused(key_of(st));
  auto again = tables.of(s.module, bias, key_of(st));  // built anew
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->find(elf_addr)->name, "function_table_test_ns::table_function(int)");
}

// The PLT stubs of this test binary, named "func@plt" at the addresses
// objdump gives them (binutils' own synthetic symbols: an independent
// truth), C++ names demangled before the suffix.
TEST(SymbolsFunctionTableTest, PltStubsAreNamedAfterTheirFunctions) {
  int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  FileSession s = report_file("unit_tests", "/proc/self/exe", fd);
  ASSERT_NE(s.module, nullptr);
  GElf_Addr bias = 0;
  ASSERT_NE(dwfl_module_getelf(s.module, &bias), nullptr);
  auto t = FunctionTable::of(s.module, bias);

  // objdump's own /proc/self/exe would be objdump: name this binary.
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  ASSERT_GT(len, 0);
  self[len] = '\0';
  std::string cmd =
      std::string("objdump -d -j .plt -j .plt.sec -j .plt.got '") + self + "' 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::vector<std::pair<uint64_t, std::string>> stubs;
  char line[4096];
  while (fgets(line, sizeof line, p) != nullptr) {
    unsigned long long addr;
    char name[2048];
    if (sscanf(line, "%llx <%2047[^>]>:", &addr, name) == 2 &&
        std::string_view(name).ends_with("@plt"))
      stubs.emplace_back(addr, name);
  }
  ASSERT_EQ(pclose(p), 0) << "objdump (binutils) failed";
  ASSERT_GT(stubs.size(), 10u);
  int plain = 0, mangled = 0;
  for (auto& [addr, name] : stubs) {
    SCOPED_TRACE(name);
    auto f = t->find(addr + 2);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->rel_start, addr);
    EXPECT_TRUE(f->name.ends_with("@plt")) << f->name;
    if (name.starts_with("_Z")) {
      ++mangled;
      EXPECT_FALSE(f->name.starts_with("_Z")) << f->name;  // demangled
    } else {
      ++plain;
      EXPECT_EQ(f->name, name);
    }
  }
  EXPECT_GT(plain, 0);
  EXPECT_GT(mangled, 0);
}

}  // namespace
}  // namespace tracekit::symbols
