#include "symbols/kallsyms.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "util/strings.hpp"

namespace tracekit::symbols {
namespace {

// A small kallsyms: vmlinux core text ending at _etext, init text ending at
// _einittext, two modules, plus lines that must be skipped.
constexpr const char* kKallsyms =
    "0000000000000000 A fixed_percpu_data\n"
    "ffffffff81000000 T _stext\n"
    "ffffffff81000000 T startup_64\n"
    "ffffffff81000100 t secondary_startup\n"
    "ffffffff81000200 T do_one\n"
    "ffffffff81000300 W weak_fn\n"
    "ffffffff81000400 D some_data\n"
    "ffffffff81000500 T _etext\n"
    "ffffffff81000600 R some_rodata\n"
    "ffffffff81001000 T _sinittext\n"
    "ffffffff81001010 t init_fn\n"
    "ffffffff81001100 T _einittext\n"
    "ffffffffc0002000 T other_fn\t[other]\n"  // out of order on purpose
    "ffffffffc0001000 t mod_fn1\t[mymod]\n"
    "ffffffffc0001100 t mod_fn2\t[mymod]\n"
    "ffffffffc0001200 d mod_data\t[mymod]\n"
    "0000000000000000 T zero_fn\n"
    "garbage line\n"
    "ffffffffzz000000 T bad_hex\n"
    "ffffffff81000600\n"
    "ffffffff81000600 T\n"
    "\n";

KernelSymbols parse(const std::string& text) {
  std::istringstream in(text);
  return KernelSymbols::parse(in);
}

struct Case {
  uint64_t addr;
  bool return_address;
  const char* name;  // nullptr: nullopt expected
  uint64_t offset;
  const char* module;
};

TEST(SymbolsKallsymsTest, LookupTable) {
  KernelSymbols ks = parse(kKallsyms);
  // startup_64 (same address as _stext), secondary_startup, do_one, weak_fn,
  // _sinittext, init_fn, mod_fn1, mod_fn2, other_fn.
  EXPECT_EQ(ks.size(), 9u);

  const Case cases[] = {
      {0xffffffff80ffffff, false, nullptr, 0, ""},                 // before first
      {0xffffffff81000000, false, "startup_64", 0, ""},            // alias: fewer '_'
      {0xffffffff81000150, false, "secondary_startup", 0x50, ""},  // middle
      {0xffffffff81000200, false, "do_one", 0, ""},                // exact start
      {0xffffffff81000200, true, "secondary_startup", 0x100, ""},  // ret at start+0
      {0xffffffff81000201, true, "do_one", 1, ""},                 // ret inside
      {0xffffffff81000350, false, "weak_fn", 0x50, ""},            // weak kept
      {0xffffffff81000450, false, "weak_fn", 0x150, ""},           // data skipped
      {0xffffffff81000500, false, nullptr, 0, ""},                 // at _etext
      {0xffffffff81000500, true, "weak_fn", 0x200, ""},            // ret at _etext
      {0xffffffff81000800, false, nullptr, 0, ""},                 // rodata
      {0xffffffff81001000, false, "_sinittext", 0, ""},            // init text
      {0xffffffff81001020, false, "init_fn", 0x10, ""},            //
      {0xffffffff81001100, false, nullptr, 0, ""},                 // at _einittext
      {0xffffffffc0000000, false, nullptr, 0, ""},                 // before modules
      {0xffffffffc0001000, false, "mod_fn1", 0, "mymod"},          // module
      {0xffffffffc0001150, false, "mod_fn2", 0x50, "mymod"},       //
      {0xffffffffc0001250, false, "mod_fn2", 0x150, "mymod"},      // module data skipped
      {0xffffffffc0002010, false, "other_fn", 0x10, "other"},      //
      {0xffffffffc0009000, false, "other_fn", 0x7000, "other"},    // last: no known end
      {0, false, nullptr, 0, ""},                                  //
      {0, true, nullptr, 0, ""},                                   // no underflow
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << std::hex << c.addr << (c.return_address ? " ret" : ""));
    auto r = ks.lookup(c.addr, c.return_address);
    if (c.name == nullptr) {
      EXPECT_FALSE(r.has_value()) << r->name;
      continue;
    }
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->name, c.name);
    EXPECT_EQ(r->offset, c.offset);
    EXPECT_EQ(r->module, c.module);
  }
}

TEST(SymbolsKallsymsTest, TextRanges) {
  KernelSymbols ks = parse(kKallsyms);
  // vmlinux: from its lowest text symbol to the last text end marker.
  auto vmlinux = ks.text_range();
  ASSERT_TRUE(vmlinux.has_value());
  EXPECT_EQ(vmlinux->start, 0xffffffff81000000u);
  EXPECT_EQ(vmlinux->end, 0xffffffff81001100u);
  // A module: from its lowest symbol to the next module's first.
  auto mymod = ks.text_range("mymod");
  ASSERT_TRUE(mymod.has_value());
  EXPECT_EQ(mymod->start, 0xffffffffc0001000u);
  EXPECT_EQ(mymod->end, 0xffffffffc0002000u);
  // The very last symbol's module has no known end.
  auto other = ks.text_range("other");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->start, 0xffffffffc0002000u);
  EXPECT_EQ(other->end, UINT64_MAX);
  EXPECT_FALSE(ks.text_range("nosuchmod").has_value());
  EXPECT_FALSE(KernelSymbols().text_range().has_value());
  // Without end markers, vmlinux ends where the first module starts.
  KernelSymbols bare = parse("ffffffff81000000 T _stext\nffffffff81000100 T f\n"
                             "ffffffffc0001000 t m\t[mod]\n");
  auto b = bare.text_range();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->start, 0xffffffff81000000u);
  EXPECT_EQ(b->end, 0xffffffffc0001000u);
}

TEST(SymbolsKallsymsTest, StrongBeatsLocalBeatsWeakAtSameAddress) {
  const struct {
    const char* text;
    const char* expected;
  } cases[] = {
      {"ffffffff81000000 W wfn\nffffffff81000000 T tfn\n", "tfn"},
      {"ffffffff81000000 W wfn\nffffffff81000000 t lfn\n", "lfn"},
      {"ffffffff81000000 t lfn\nffffffff81000000 T gfn\n", "gfn"},
      {"ffffffff81000000 T __x\nffffffff81000000 T _y\n", "_y"},
      {"ffffffff81000000 T first\nffffffff81000000 T second\n", "first"},
  };
  for (const auto& c : cases) {
    KernelSymbols ks = parse(c.text);
    EXPECT_EQ(ks.size(), 1u) << c.text;
    auto r = ks.lookup(0xffffffff81000004);
    ASSERT_TRUE(r.has_value()) << c.text;
    EXPECT_EQ(r->name, c.expected) << c.text;
  }
}

// Found by tests/fuzz/kallsyms_fuzz.cpp: a NUL in a name or module came
// back as an empty or cut name (names are stored NUL-separated). Such lines
// are skipped; the symbol before them extends over their address.
TEST(SymbolsKallsymsTest, LinesWithANulAreSkipped) {
  using namespace std::string_literals;
  const std::string cases[] = {
      "ffffffff81000000 T before\nffffffff81000010 t \0\0\0\x10x_init_setup\n"s,
      "ffffffff81000000 T before\nffffffff81000010 t name\0tail\n"s,
      "ffffffff81000000 T before\nffffffff81000010 t fn\t[mo\0d]\n"s,
  };
  for (const auto& text : cases) {
    KernelSymbols ks = parse(text);
    EXPECT_EQ(ks.size(), 1u);
    auto r = ks.lookup(0xffffffff81000014);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->name, "before");
    EXPECT_EQ(r->offset, 0x14u);
    EXPECT_EQ(r->module, "");
  }
}

TEST(SymbolsKallsymsTest, ZeroAddressesOnlyGiveAnEmptyTable) {
  KernelSymbols ks = parse(
      "0000000000000000 T _stext\n"
      "0000000000000000 T schedule\n"
      "0000000000000000 t mod_fn\t[mymod]\n");
  EXPECT_EQ(ks.size(), 0u);
  EXPECT_FALSE(ks.lookup(0xffffffff81000000).has_value());
  EXPECT_FALSE(KernelSymbols().lookup(0xffffffff81000000).has_value());
}

TEST(SymbolsKallsymsTest, LoadMissingFileFails) {
  auto ks = KernelSymbols::load("/nonexistent/kallsyms");
  ASSERT_FALSE(ks.ok());
  EXPECT_EQ(ks.error().path, "/nonexistent/kallsyms");
  EXPECT_EQ(ks.error().err, ENOENT);
}

// A parsed table, or none, never makes a lookup wait.
TEST(SymbolsKallsymsTest, ParsedAndEmptyTablesAreLoaded) {
  EXPECT_TRUE(KernelSymbols().loaded());
  EXPECT_TRUE(KernelSymbols::parse(std::string_view("ffffffff81000000 T _stext\n")).loaded());
}

TEST(SymbolsKallsymsTest, LoadWithoutAddressesFailsWithHint) {
  std::string path = testing::TempDir() + "kallsyms_zeros";
  {
    std::ofstream out(path);
    out << "0000000000000000 T _stext\n0000000000000000 T schedule\n";
  }
  auto ks = KernelSymbols::load(path);
  std::remove(path.c_str());
  ASSERT_FALSE(ks.ok());
  EXPECT_EQ(ks.error().path, path);
  EXPECT_NE(ks.error().hint.find("kptr_restrict"), std::string::npos);
}

// The real file: resolves the addresses the file itself gives. Needs
// readable addresses (root, or kptr_restrict=0 with perf access).
TEST(SymbolsKallsymsTest, LoadResolvesRealKernelAddresses) {
  std::ifstream in("/proc/kallsyms");
  std::string line;
  uint64_t schedule = 0, etext = 0;
  std::vector<uint64_t> text;
  while (std::getline(in, line)) {
    auto f = split(line, ' ');
    if (f.size() < 3 || (f[1] != "T" && f[1] != "t")) continue;
    uint64_t addr = parse_hex<uint64_t>(f[0]).value_or(0);
    std::string_view name = f[2].substr(0, f[2].find('\t'));
    if (name == "schedule") schedule = addr;
    if (name == "_etext") etext = addr;
    // The ends of vmlinux text are markers, not functions.
    if (addr != 0 && name != "_etext" && name != "_einittext") text.push_back(addr);
  }
  if (schedule == 0) GTEST_SKIP() << "kernel addresses hidden (not root, or kptr_restrict)";

  auto ks = KernelSymbols::load();
  ASSERT_TRUE(ks.ok()) << ks.error().str();
  EXPECT_GT(ks->size(), 10000u);
  EXPECT_TRUE(ks->loaded());  // size() waited for the background load
  auto r = ks->lookup(schedule + 4);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, "schedule");
  EXPECT_EQ(r->offset, 4u);
  EXPECT_EQ(r->module, "");
  // A return address at schedule+0 belongs to the function before it.
  auto before = ks->lookup(schedule, true);
  ASSERT_TRUE(before.has_value());
  EXPECT_NE(before->name, "schedule");
  // Past the end of the kernel's text is rodata: no function.
  ASSERT_NE(etext, 0u);
  EXPECT_FALSE(ks->lookup(etext + 0x10).has_value());
  // Every text symbol's own address resolves to a symbol starting there.
  size_t wrong = 0;
  for (uint64_t addr : text) {
    auto s = ks->lookup(addr);
    if (!s || s->offset != 0) ++wrong;
  }
  EXPECT_EQ(wrong, 0u) << "of " << text.size();
}

}  // namespace
}  // namespace tracekit::symbols

// kernel_has_text_symbol: text symbols only, the module tab cut off, and
// core_text_only stops at _etext.
TEST(SymbolsKallsymsTest, HasTextSymbol) {
  char path[] = "/tmp/tk-kallsyms-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string text =
      "ffffffff81000000 T _stext\n"
      "ffffffff81001000 t system_call_fastpath\n"
      "ffffffff81002000 T _etext\n"
      "ffffffff82000000 D tcp_data\n"
      "ffffffff83000000 T x86_init_late\n"
      "ffffffffa0000000 t nvme_probe\t[nvme]\n";
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  EXPECT_TRUE(tracekit::symbols::kernel_has_text_symbol({"system_call_fastpath"}, false, path));
  EXPECT_TRUE(tracekit::symbols::kernel_has_text_symbol({"entry_SYSCALL_64_fastpath", "system_call_fastpath"},
                                              true, path));
  EXPECT_FALSE(tracekit::symbols::kernel_has_text_symbol({"tcp_data"}, false, path));
  EXPECT_TRUE(tracekit::symbols::kernel_has_text_symbol({"nvme_probe"}, false, path));
  EXPECT_TRUE(tracekit::symbols::kernel_has_text_symbol({"x86_init_late"}, false, path));
  EXPECT_FALSE(tracekit::symbols::kernel_has_text_symbol({"x86_init_late"}, true, path));
  EXPECT_FALSE(tracekit::symbols::kernel_has_text_symbol({"nvme"}, false, path));
  unlink(path);
}
