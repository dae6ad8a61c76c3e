// How this works: a uprobe is placed by file offset ("/path:0x1234" in
// uprobe_events), while symbol tables give virtual addresses. The program
// headers say where each PT_LOAD segment's bytes sit in the file
// (p_offset) and where they go in memory (p_vaddr), so a function's offset
// is st_value - p_vaddr + p_offset of the segment holding st_value. In
// GNU ld's shared libraries and PIEs offset and address happen to be equal
// (libc.so.6 here); in a non-PIE executable (text at 0x401000, file offset
// 0x1000) or an lld-linked file they differ, so only the mapping is right.
//
// Names come from .symtab when the file has one (unstripped programs), else
// .dynsym (a distribution's shared libraries: Debian's libc.so.6 has no
// .symtab). Separate debuginfo (/usr/lib/debug) is not read: it is
// installed on some machines only, and expansion must name the same
// functions everywhere.
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "probe/spec.hpp"
#include "symbols/segments.hpp"
#include "util/fd.hpp"
#include "util/safe_file.hpp"

namespace tracekit::probe {

namespace {

struct ElfEnd {
  void operator()(Elf* e) const { elf_end(e); }
};

}  // namespace

Result<ElfFunctions> elf_symbols(const std::string& path) {
  // libelf refuses every call until told which ELF version the caller knows.
  static const bool versioned = elf_version(EV_CURRENT) != EV_NONE;
  if (!versioned) return Error{0, "libelf is unusable", path, "elf_version failed"};

  // Never blocks on a FIFO or device put at the path (util/safe_file.hpp).
  auto fd = open_regular_followed(path);
  if (!fd && fd.error().err != EINVAL) return Error{fd.error().err, "cannot open", path, {}};
  std::unique_ptr<Elf, ElfEnd> elf(fd ? elf_begin(fd->get(), ELF_C_READ_MMAP, nullptr) : nullptr);
  if (!elf || elf_kind(elf.get()) != ELF_K_ELF)
    return Error{0, "not an ELF file", path, "give an executable or a shared library"};

  size_t nphdr = 0;
  if (elf_getphdrnum(elf.get(), &nphdr) != 0)
    return Error{0, std::string("cannot read the program headers: ") + elf_errmsg(-1), path, {}};
  const auto segments = symbols::Segments::of(elf.get());

  Elf_Scn* symtab = nullptr;
  Elf_Scn* dynsym = nullptr;
  for (Elf_Scn* scn = elf_nextscn(elf.get(), nullptr); scn; scn = elf_nextscn(elf.get(), scn)) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    if (sh.sh_type == SHT_SYMTAB) symtab = scn;
    if (sh.sh_type == SHT_DYNSYM) dynsym = scn;
  }
  ElfFunctions result;
  result.has_symtab = symtab != nullptr;
  result.has_dynsym = dynsym != nullptr;
  std::vector<ElfFunction>& out = result.functions;
  Elf_Scn* scn = symtab ? symtab : dynsym;
  if (scn == nullptr) return result;  // fully stripped: no names to probe by

  GElf_Shdr sh;
  Elf_Data* data = elf_getdata(scn, nullptr);
  if (gelf_getshdr(scn, &sh) == nullptr || data == nullptr)
    return Error{0, std::string("cannot read the symbol table: ") + elf_errmsg(-1), path, {}};
  size_t entsize = sh.sh_entsize ? sh.sh_entsize : gelf_fsize(elf.get(), ELF_T_SYM, 1, EV_CURRENT);
  size_t count = entsize ? sh.sh_size / entsize : 0;
  for (size_t i = 1; i < count; ++i) {  // entry 0 is the null symbol
    GElf_Sym sym;
    if (gelf_getsym(data, static_cast<int>(i), &sym) == nullptr) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    // Imports (undefined) live in another file; SHN_ABS and friends are no
    // code in this one.
    if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE || sym.st_value == 0) continue;
    const char* name = elf_strptr(elf.get(), sh.sh_link, sym.st_name);
    if (name == nullptr || name[0] == '\0') continue;
    auto file_offset = segments.offset(sym.st_value);
    if (!file_offset) continue;
    ElfFunction f;
    // .symtab spells versioned definitions "memcpy@@GLIBC_2.14"; uprobe
    // users and our symbolizer say "memcpy".
    std::string_view plain(name);
    f.name = std::string(plain.substr(0, plain.find('@')));
    f.address = sym.st_value;
    f.file_offset = *file_offset;
    f.size = sym.st_size;
    f.binding = GELF_ST_BIND(sym.st_info);
    f.ifunc = type == STT_GNU_IFUNC;
    out.push_back(std::move(f));
  }
  return result;
}

Result<std::vector<ElfFunction>> elf_functions(const std::string& path) {
  auto syms = elf_symbols(path);
  if (!syms) return syms.error();
  return std::move(syms->functions);
}

bool entry_sets_frame(const std::string& path, uint64_t offset) {
  static constexpr uint8_t kPushRbp = 0x55, kEndbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
  auto fd = open_regular_followed(path);
  if (!fd) return false;
  uint8_t insn[4] = {};
  ssize_t n = pread(fd->get(), insn, sizeof insn, static_cast<off_t>(offset));
  return (n >= 1 && insn[0] == kPushRbp) ||
         (n == sizeof insn && std::memcmp(insn, kEndbr64, sizeof insn) == 0);
}

}  // namespace tracekit::probe
