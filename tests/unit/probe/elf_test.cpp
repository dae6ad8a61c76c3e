// elf_functions and user-spec expansion: on small ELF files written here
// (exact layouts: a non-PIE program whose offsets differ from its
// addresses, aliases, versioned names, imports), on this test program
// itself (offsets checked against /proc/self/maps) and on libc.
#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "probe/spec.hpp"
#include "util/strings.hpp"

extern "C" __attribute__((noinline, used)) int tracekit_probe_test_target(int x) {
  asm volatile("" ::: "memory");  // keeps the function (and its symbol) as written
  return x * 3 + 1;
}

namespace tracekit::probe {
namespace {

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/tracekit-probe-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Seg {
  uint64_t vaddr, offset, filesz;
};

struct Sym {
  std::string name;
  uint64_t value;
  uint64_t size;
  unsigned char bind;
  unsigned char type;
  bool defined = true;
};

template <class T>
void put(std::string& out, size_t at, const T& v) {
  if (out.size() < at + sizeof v) out.resize(at + sizeof v);
  std::memcpy(&out[at], &v, sizeof v);
}

size_t align8(size_t n) { return (n + 7) & ~size_t{7}; }

// An x86-64 ELF file with the given PT_LOAD segments and symbol tables
// (either may be empty: then that section is left out). Symbols are defined
// in section 1, a .text without bytes: elf_functions reads no code.
std::string build_elf(uint16_t type, const std::vector<Seg>& segs, const std::vector<Sym>& symtab,
                      const std::vector<Sym>& dynsym) {
  std::string out(sizeof(Elf64_Ehdr), '\0');
  size_t phoff = out.size();
  for (const Seg& s : segs) {
    Elf64_Phdr ph{};
    ph.p_type = PT_LOAD;
    ph.p_flags = PF_R | PF_X;
    ph.p_offset = s.offset;
    ph.p_vaddr = ph.p_paddr = s.vaddr;
    ph.p_filesz = s.filesz;
    ph.p_memsz = s.filesz + 0x1000;  // a bss tail: in memory, not in the file
    ph.p_align = 0x1000;
    put(out, out.size(), ph);
  }
  std::vector<Elf64_Shdr> shdrs(2);  // null, .text
  std::string shstrtab(1, '\0');
  auto shname = [&](const char* n) {
    auto at = static_cast<Elf64_Word>(shstrtab.size());
    shstrtab += n;
    shstrtab.push_back('\0');
    return at;
  };
  shdrs[1].sh_name = shname(".text");
  shdrs[1].sh_type = SHT_PROGBITS;
  shdrs[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
  shdrs[1].sh_addr = segs.empty() ? 0 : segs[0].vaddr;
  auto add_table = [&](const std::vector<Sym>& syms, Elf64_Word sh_type, const char* name,
                       const char* strname) {
    if (syms.empty()) return;
    std::string str(1, '\0');
    std::string ents(sizeof(Elf64_Sym), '\0');  // entry 0: the null symbol
    for (const Sym& s : syms) {
      Elf64_Sym e{};
      e.st_name = static_cast<Elf64_Word>(str.size());
      str += s.name;
      str.push_back('\0');
      e.st_info = static_cast<unsigned char>(ELF64_ST_INFO(s.bind, s.type));
      e.st_shndx = s.defined ? 1 : SHN_UNDEF;
      e.st_value = s.value;
      e.st_size = s.size;
      put(ents, ents.size(), e);
    }
    Elf64_Shdr strsh{};
    strsh.sh_name = shname(strname);
    strsh.sh_type = SHT_STRTAB;
    strsh.sh_offset = out.size();
    strsh.sh_size = str.size();
    strsh.sh_addralign = 1;
    out += str;
    out.resize(align8(out.size()));
    Elf64_Shdr symsh{};
    symsh.sh_name = shname(name);
    symsh.sh_type = sh_type;
    symsh.sh_offset = out.size();
    symsh.sh_size = ents.size();
    symsh.sh_entsize = sizeof(Elf64_Sym);
    symsh.sh_addralign = 8;
    symsh.sh_link = static_cast<Elf64_Word>(shdrs.size());  // the string table, added first
    symsh.sh_info = 1;
    out += ents;
    shdrs.push_back(strsh);
    shdrs.push_back(symsh);
  };
  add_table(dynsym, SHT_DYNSYM, ".dynsym", ".dynstr");
  add_table(symtab, SHT_SYMTAB, ".symtab", ".strtab");
  Elf64_Shdr shstr{};
  shstr.sh_name = shname(".shstrtab");
  shstr.sh_type = SHT_STRTAB;
  shstr.sh_offset = out.size();
  shstr.sh_size = shstrtab.size();
  shstr.sh_addralign = 1;
  out += shstrtab;
  shdrs.push_back(shstr);
  out.resize(align8(out.size()));
  size_t shoff = out.size();
  for (const Elf64_Shdr& sh : shdrs) put(out, out.size(), sh);

  Elf64_Ehdr eh{};
  std::memcpy(eh.e_ident, ELFMAG, SELFMAG);
  eh.e_ident[EI_CLASS] = ELFCLASS64;
  eh.e_ident[EI_DATA] = ELFDATA2LSB;
  eh.e_ident[EI_VERSION] = EV_CURRENT;
  eh.e_type = type;
  eh.e_machine = EM_X86_64;
  eh.e_version = EV_CURRENT;
  eh.e_entry = segs.empty() ? 0 : segs[0].vaddr;
  eh.e_phoff = segs.empty() ? 0 : phoff;
  eh.e_shoff = shoff;
  eh.e_ehsize = sizeof(Elf64_Ehdr);
  eh.e_phentsize = sizeof(Elf64_Phdr);
  eh.e_phnum = static_cast<Elf64_Half>(segs.size());
  eh.e_shentsize = sizeof(Elf64_Shdr);
  eh.e_shnum = static_cast<Elf64_Half>(shdrs.size());
  eh.e_shstrndx = static_cast<Elf64_Half>(shdrs.size() - 1);
  put(out, 0, eh);
  return out;
}

void write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A non-PIE program: text at 0x401000 from file offset 0x1000, and a second
// code segment whose address-to-offset distance differs from the first.
const std::vector<Seg> kSegs = {
    {0x400000, 0x0, 0x1000}, {0x401000, 0x1000, 0x2000}, {0x500000, 0x3000, 0x1000}};

const std::vector<Sym> kSymtab = {
    {"main", 0x401100, 0x20, STB_GLOBAL, STT_FUNC},
    {"helper", 0x401200, 0, STB_LOCAL, STT_FUNC},  // sizeless (assembly): still a function
    {"memcpy@@GLIBC_2.14", 0x401300, 0x10, STB_GLOBAL, STT_GNU_IFUNC},
    {"memcpy@GLIBC_2.2.5", 0x401400, 0x10, STB_GLOBAL, STT_FUNC},
    {"far", 0x500010, 0x8, STB_GLOBAL, STT_FUNC},
    {"puts@GLIBC_2.2.5", 0, 0, STB_GLOBAL, STT_FUNC, false},  // an import
    {"printf", 0x401700, 0, STB_GLOBAL, STT_FUNC, false},     // undefined with a value (PLT)
    {"data_obj", 0x400800, 0x8, STB_GLOBAL, STT_OBJECT},
    {"label", 0x401800, 0, STB_LOCAL, STT_NOTYPE},
    {"zero", 0, 0x8, STB_GLOBAL, STT_FUNC},
    {"outside", 0x900000, 0x8, STB_GLOBAL, STT_FUNC},  // in no segment
    {"in_bss", 0x501800, 0x8, STB_GLOBAL, STT_FUNC},   // in memory, past the file bytes
    {"foo", 0x401500, 0x10, STB_GLOBAL, STT_FUNC},
    {"foo_weak", 0x401500, 0x10, STB_WEAK, STT_FUNC},
    {"_foo", 0x401500, 0x10, STB_LOCAL, STT_FUNC},
    {"__foo", 0x401500, 0x10, STB_GLOBAL, STT_FUNC},
};
const std::vector<Sym> kDynsym = {{"dyn_only", 0x401600, 0x10, STB_GLOBAL, STT_FUNC}};

struct Want {
  const char* name;
  uint64_t address, offset, size;
  int binding;
  bool ifunc;
};

void expect_functions(const std::vector<ElfFunction>& got, const std::vector<Want>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(got[i].name, want[i].name);
    EXPECT_EQ(got[i].address, want[i].address);
    EXPECT_EQ(got[i].file_offset, want[i].offset);
    EXPECT_EQ(got[i].size, want[i].size);
    EXPECT_EQ(got[i].binding, want[i].binding);
    EXPECT_EQ(got[i].ifunc, want[i].ifunc);
  }
}

TEST(ProbeElfTest, NonPieOffsetsFromTheSegments) {
  TempDir dir;
  std::string path = dir.path() + "/prog";
  write(path, build_elf(ET_EXEC, kSegs, kSymtab, kDynsym));
  auto fns = elf_functions(path);
  ASSERT_TRUE(fns.ok()) << fns.error().str();
  // .symtab wins over .dynsym (dyn_only is absent); versions are cut off.
  expect_functions(*fns, {
                             {"main", 0x401100, 0x1100, 0x20, STB_GLOBAL, false},
                             {"helper", 0x401200, 0x1200, 0, STB_LOCAL, false},
                             {"memcpy", 0x401300, 0x1300, 0x10, STB_GLOBAL, true},
                             {"memcpy", 0x401400, 0x1400, 0x10, STB_GLOBAL, false},
                             {"far", 0x500010, 0x3010, 0x8, STB_GLOBAL, false},
                             {"foo", 0x401500, 0x1500, 0x10, STB_GLOBAL, false},
                             {"foo_weak", 0x401500, 0x1500, 0x10, STB_WEAK, false},
                             {"_foo", 0x401500, 0x1500, 0x10, STB_LOCAL, false},
                             {"__foo", 0x401500, 0x1500, 0x10, STB_GLOBAL, false},
                         });
}

TEST(ProbeElfTest, DynsymWhenThereIsNoSymtab) {
  TempDir dir;
  std::string path = dir.path() + "/lib.so";
  write(path, build_elf(ET_DYN, {{0, 0, 0x1000}, {0x401000, 0x1000, 0x2000}}, {}, kDynsym));
  auto fns = elf_functions(path);
  ASSERT_TRUE(fns.ok()) << fns.error().str();
  expect_functions(*fns, {{"dyn_only", 0x401600, 0x1600, 0x10, STB_GLOBAL, false}});
}

TEST(ProbeElfTest, NoSymbolTablesNoFunctions) {
  TempDir dir;
  std::string path = dir.path() + "/stripped";
  write(path, build_elf(ET_EXEC, kSegs, {}, {}));
  auto fns = elf_functions(path);
  ASSERT_TRUE(fns.ok()) << fns.error().str();
  EXPECT_TRUE(fns->empty());
}

TEST(ProbeElfTest, Errors) {
  TempDir dir;
  std::string text = dir.path() + "/script.sh";
  write(text, "#!/bin/sh\necho hello\n");
  auto r = elf_functions(text);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "not an ELF file");
  EXPECT_EQ(r.error().path, text);

  auto missing = elf_functions(dir.path() + "/missing");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cannot open");
  EXPECT_EQ(missing.error().err, ENOENT);
}

// Where /proc/self/maps says addr is mapped from: (mapping start, file offset).
std::pair<uint64_t, uint64_t> mapping_of(uint64_t addr) {
  auto maps = read_file("/proc/self/maps");
  EXPECT_TRUE(maps.ok());
  if (!maps) return {0, 0};
  for (std::string_view line : split(*maps, '\n')) {
    // "55d0c8a00000-55d0c8a21000 r-xp 00001000 fd:01 1234 /path"
    auto f = split(line, ' ');
    if (f.size() < 3) continue;
    auto range = split(f[0], '-');
    auto start = parse_hex<uint64_t>(range[0]);
    auto end = parse_hex<uint64_t>(range.size() > 1 ? range[1] : "");
    auto off = parse_hex<uint64_t>(f[2]);
    if (start && end && off && addr >= *start && addr < *end) return {*start, *off};
  }
  ADD_FAILURE() << "no mapping holds " << std::hex << addr;
  return {0, 0};
}

TEST(ProbeElfTest, OwnFunctionOffsetAgreesWithTheMapping) {
  EXPECT_EQ(tracekit_probe_test_target(2), 7);
  auto fns = elf_functions("/proc/self/exe");
  ASSERT_TRUE(fns.ok()) << fns.error().str();
  const ElfFunction* f = nullptr;
  for (const ElfFunction& x : *fns)
    if (x.name == "tracekit_probe_test_target") f = &x;
  ASSERT_NE(f, nullptr);
  auto addr = reinterpret_cast<uint64_t>(&tracekit_probe_test_target);
  auto [start, offset] = mapping_of(addr);
  EXPECT_EQ(f->file_offset, addr - start + offset);
  EXPECT_GT(f->size, 0u);
  EXPECT_EQ(f->binding, STB_GLOBAL);

  ExpandOptions opts;
  auto spec = parse_spec("/proc/self/exe:tracekit_probe_test_target");
  ASSERT_TRUE(spec.ok());
  auto targets = expand(*spec, opts);
  ASSERT_TRUE(targets.ok()) << targets.error().str();
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_EQ((*targets)[0].kind, Kind::kUser);
  EXPECT_EQ((*targets)[0].function, "tracekit_probe_test_target");
  EXPECT_EQ((*targets)[0].path, "/proc/self/exe");
  EXPECT_EQ((*targets)[0].offset, addr - start + offset);
}

TEST(ProbeElfTest, Libc) {
  auto libc = resolve_library("c");
  ASSERT_TRUE(libc.ok()) << libc.error().str();
  auto fns = elf_functions(*libc);
  ASSERT_TRUE(fns.ok()) << fns.error().str();
  // Debian's libc.so.6 has only .dynsym: a few thousand exported functions.
  EXPECT_GT(fns->size(), 1000u);
  auto find = [&](const std::string& name) -> const ElfFunction* {
    for (const ElfFunction& f : *fns)
      if (f.name == name) return &f;
    return nullptr;
  };
  const ElfFunction* getpid = find("getpid");
  const ElfFunction* malloc = find("malloc");
  ASSERT_NE(getpid, nullptr);
  ASSERT_NE(malloc, nullptr);
  EXPECT_GT(malloc->size, 0u);
  // libc's malloc is where the dynamic linker put it. Asked of libc itself:
  // &malloc may be an interposer's (ASan's, jemalloc's).
  void* handle = dlopen(libc->c_str(), RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(handle, nullptr) << dlerror();
  auto addr = reinterpret_cast<uint64_t>(dlsym(handle, "malloc"));
  dlclose(handle);
  auto [start, offset] = mapping_of(addr);
  EXPECT_EQ(malloc->file_offset, addr - start + offset);

  auto spec = parse_spec("c:malloc");
  ASSERT_TRUE(spec.ok());
  auto targets = expand(*spec, ExpandOptions{});
  ASSERT_TRUE(targets.ok()) << targets.error().str();
  ASSERT_EQ(targets->size(), 1u);
  EXPECT_EQ((*targets)[0].path, *libc);
  EXPECT_EQ((*targets)[0].offset, malloc->file_offset);
}

class ProbeExpandUserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path() + "/prog";
    write(path_, build_elf(ET_EXEC, kSegs, kSymtab, kDynsym));
  }
  Result<std::vector<Target>> run(const std::string& spec_text, bool regex = false,
                                  size_t max = 1000) {
    auto spec = parse_spec(spec_text);
    if (!spec) return spec.error();
    ExpandOptions opts;
    opts.regex = regex;
    opts.max_probes = max;
    return expand(*spec, opts);
  }
  TempDir dir_;
  std::string path_;
};

struct Probe {
  const char* function;
  uint64_t offset;
};

void expect_targets(const Result<std::vector<Target>>& got, const std::string& path, Kind kind,
                    const std::vector<Probe>& want) {
  ASSERT_TRUE(got.ok()) << got.error().str();
  ASSERT_EQ(got->size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].function);
    EXPECT_EQ((*got)[i].kind, kind);
    EXPECT_EQ((*got)[i].function, want[i].function);
    EXPECT_EQ((*got)[i].offset, want[i].offset);
    EXPECT_EQ((*got)[i].path, path);
  }
}

TEST_F(ProbeExpandUserTest, OneTargetPerOffsetUnderThePreferredName) {
  // Four names at 0x1500: the global one with the fewest underscores wins.
  expect_targets(run(path_ + ":*foo*"), path_, Kind::kUser, {{"foo", 0x1500}});
  expect_targets(run(path_ + ":foo"), path_, Kind::kUser, {{"foo", 0x1500}});
  expect_targets(run(path_ + ":__foo"), path_, Kind::kUser, {{"__foo", 0x1500}});
  // Weak over local.
  expect_targets(run(path_ + ":^(_foo|foo_weak)$", true), path_, Kind::kUser,
                 {{"foo_weak", 0x1500}});
}

// Entry probes are marked (their callers need the stack top); return probes
// are not.
TEST_F(ProbeExpandUserTest, EntryProbesAreMarked) {
  auto entry = run(path_ + ":foo");
  ASSERT_TRUE(entry.ok()) << entry.error().str();
  ASSERT_EQ(entry->size(), 1u);
  EXPECT_TRUE((*entry)[0].at_entry);
  EXPECT_EQ((*entry)[0].frame_entry, entry_sets_frame(path_, (*entry)[0].offset));
  auto ret = run("r:" + path_ + ":foo");
  ASSERT_TRUE(ret.ok()) << ret.error().str();
  ASSERT_EQ(ret->size(), 1u);
  EXPECT_FALSE((*ret)[0].at_entry);
  EXPECT_FALSE((*ret)[0].frame_entry);
}

TEST_F(ProbeExpandUserTest, OneNameAtTwoOffsetsIsTwoTargets) {
  expect_targets(run(path_ + ":memcpy"), path_, Kind::kUser,
                 {{"memcpy", 0x1300}, {"memcpy", 0x1400}});
}

TEST_F(ProbeExpandUserTest, AllSortedByName) {
  expect_targets(run("r:" + path_ + ":*"), path_, Kind::kUserReturn,
                 {{"far", 0x3010},
                  {"foo", 0x1500},
                  {"helper", 0x1200},
                  {"main", 0x1100},
                  {"memcpy", 0x1300},
                  {"memcpy", 0x1400}});
  expect_targets(run(path_ + ":nothing*"), path_, Kind::kUser, {});
}

TEST_F(ProbeExpandUserTest, LimitCountsDistinctOffsets) {
  auto r = run(path_ + ":*", false, 5);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "6 probes match \"" + path_ + ":*\": more than the limit of 5");
  EXPECT_EQ(r.error().hint, "narrow the pattern");
  EXPECT_TRUE(run(path_ + ":*", false, 6).ok());
}

TEST_F(ProbeExpandUserTest, Errors) {
  auto missing = run(dir_.path() + "/missing:main");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message, "cannot find");
  EXPECT_EQ(missing.error().err, ENOENT);

  write(dir_.path() + "/text", "not ELF");
  auto text = run(dir_.path() + "/text:main");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.error().message, "not an ELF file");

  auto regex = run(path_ + ":ma(in", true);
  ASSERT_FALSE(regex.ok());
  EXPECT_EQ(regex.error().message.rfind("bad regular expression \"ma(in\": ", 0), 0u);

  auto lib = run("no_such_lib_xyz:main");
  ASSERT_FALSE(lib.ok());
  EXPECT_EQ(lib.error().message, "cannot find library or program \"no_such_lib_xyz\"");
}

}  // namespace
}  // namespace tracekit::probe

namespace tracekit::probe {
namespace {

// Zero matches in a stripped file says the file is stripped (issue 8, row
// 14): the name may be there, only unseen. Which tables were read comes
// with elf_symbols().
// The instruction at a function's entry: push %rbp or endbr64 (where the
// kernel adds the caller itself), anything else, or nothing to read.
TEST(ProbeElfTest, EntrySetsFrame) {
  TempDir dir;
  std::string path = dir.path() + "/code";
  write(path, std::string("\x55\x48\x89\xe5"        // 0: push %rbp; mov %rsp,%rbp
                          "\xf3\x0f\x1e\xfa"        // 4: endbr64
                          "\x41\x54\x55\x53"        // 8: push %r12 (malloc's first)
                          "\xf3\x0f\x1e\xfb"        // 12: not endbr64 (endbr32)
                          "\xf3\x0f",                // 16: endbr64 cut short
                          18));
  EXPECT_TRUE(entry_sets_frame(path, 0));
  EXPECT_TRUE(entry_sets_frame(path, 4));
  EXPECT_FALSE(entry_sets_frame(path, 1));
  EXPECT_FALSE(entry_sets_frame(path, 8));
  EXPECT_FALSE(entry_sets_frame(path, 12));
  EXPECT_FALSE(entry_sets_frame(path, 16));
  EXPECT_FALSE(entry_sets_frame(path, 18));
  EXPECT_FALSE(entry_sets_frame(path, 1u << 20));
  EXPECT_FALSE(entry_sets_frame(dir.path() + "/missing", 0));
}

TEST(ProbeElfTest, SymbolTablesPresent) {
  TempDir dir;
  struct Case {
    const char* name;
    std::vector<Sym> symtab, dynsym;
    bool has_symtab, has_dynsym;
  };
  const Case cases[] = {
      {"both", kSymtab, kDynsym, true, true},
      {"symtab_only", kSymtab, {}, true, false},
      {"dynsym_only", {}, kDynsym, false, true},
      {"neither", {}, {}, false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::string path = dir.path() + "/" + c.name;
    write(path, build_elf(ET_EXEC, kSegs, c.symtab, c.dynsym));
    auto syms = elf_symbols(path);
    ASSERT_TRUE(syms.ok()) << syms.error().str();
    EXPECT_EQ(syms->has_symtab, c.has_symtab);
    EXPECT_EQ(syms->has_dynsym, c.has_dynsym);
  }
}

TEST(ProbeElfTest, ZeroMatchesInAStrippedFileSaySo) {
  TempDir dir;
  const std::string dynsym_only = dir.path() + "/dynsym_only";
  const std::string neither = dir.path() + "/neither";
  const std::string unstripped = dir.path() + "/unstripped";
  write(dynsym_only, build_elf(ET_EXEC, kSegs, {}, kDynsym));
  write(neither, build_elf(ET_EXEC, kSegs, {}, {}));
  write(unstripped, build_elf(ET_EXEC, kSegs, kSymtab, kDynsym));
  auto run = [](const std::string& text) {
    auto spec = parse_spec(text);
    EXPECT_TRUE(spec.ok());
    return expand(*spec, ExpandOptions{});
  };

  auto d = run(dynsym_only + ":main");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, "0 functions matched by \"" + dynsym_only +
                                   ":main\": " + dynsym_only +
                                   " has no symbol table (.symtab): it is stripped, so only its "
                                   "dynamic symbols (.dynsym) could be matched");
  EXPECT_EQ(d.error().hint, "probe an unstripped build of it");

  auto n = run(neither + ":main");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message, "0 functions matched by \"" + neither + ":main\": " + neither +
                                   " has no symbol table (neither .symtab nor .dynsym): it is "
                                   "stripped, so no function can be found by name");
  EXPECT_EQ(n.error().hint, "probe an unstripped build of it");

  // What .dynsym has still matches; a wrong name in an unstripped file is
  // plain zero matches (the tool prints bcc's line).
  auto found = run(dynsym_only + ":dyn_only");
  ASSERT_TRUE(found.ok()) << found.error().str();
  EXPECT_EQ(found->size(), 1u);
  auto none = run(unstripped + ":no_such_function");
  ASSERT_TRUE(none.ok()) << none.error().str();
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace tracekit::probe
