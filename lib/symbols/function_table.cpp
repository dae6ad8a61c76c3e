// Why a table of our own: libdwfl's own address lookup
// (dwfl_module_addrinfo) scans the whole symbol table on every call, ~1 ms
// per lookup in libLLVM's 45,000 symbols. Instead, the first lookup in a
// file takes its functions once from dwfl_module_getsymtab() (.symtab, from
// the file or its separate debuginfo, else .dynsym) into a sorted table
// searched by bisection. Tables are keyed by file identity (FileKey) and
// shared by every process mapping that file, so the second shell or worker
// process only pays for opening the file to learn its load bias. Addresses
// in the tables are relative to the load bias.
#include "symbols/function_table.hpp"

#include <cxxabi.h>
#include <gelf.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "symbols/symbol.hpp"

namespace tracekit::symbols {

namespace {

// The demangled name, as perf shows it (with parameter types); nullopt when
// name is no mangled C++ name.
// A PLT stub's name ("_ZdlPv@plt") keeps its suffix after the demangled
// name ("operator delete(void*)@plt"), as perf shows it.
std::optional<std::string> demangle(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return std::nullopt;
  std::string_view whole(name);
  std::string_view suffix = whole.ends_with("@plt") ? "@plt" : "";
  std::string base(whole.substr(0, whole.size() - suffix.size()));
  int status = 0;
  char* d = abi::__cxa_demangle(base.c_str(), nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return std::nullopt;
  std::string out(d);
  std::free(d);
  return out.append(suffix);
}

// Among aliases, libdwfl's choice: a global name over a weak one over a
// file-local one, since the local aliases are a library's internal names
// (glibc's debuginfo has "__GI___write" and "__libc_write" besides the weak
// "write"). Then a typed function over an assembler label, then the name
// with fewer leading underscores.
int rank(const GElf_Sym& sym, const char* name) {
  int preference = elf_binding_preference(GELF_ST_BIND(sym.st_info));
  if (GELF_ST_TYPE(sym.st_info) == STT_NOTYPE) preference += 3;
  return alias_rank(preference, name);
}

// The section a symbol is defined in, or nullopt.
std::optional<GElf_Shdr> section(Elf* elf, GElf_Word shndx) {
  GElf_Shdr shdr;
  Elf_Scn* scn = elf ? elf_getscn(elf, shndx) : nullptr;
  if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return std::nullopt;
  return shdr;
}

// The symbol a GOT slot is filled with at load time, by the slot's address:
// what the dynamic relocations (.rela.plt's jump slots, .rela.dyn's
// GLOB_DAT entries) name.
std::unordered_map<uint64_t, std::string> got_slots(Elf* elf) {
  std::unordered_map<uint64_t, std::string> slots;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_RELA) continue;
    Elf_Scn* symscn = elf_getscn(elf, shdr.sh_link);
    GElf_Shdr symshdr;
    if (symscn == nullptr || gelf_getshdr(symscn, &symshdr) == nullptr) continue;
    Elf_Data* rels = elf_getdata(scn, nullptr);
    Elf_Data* syms = elf_getdata(symscn, nullptr);
    if (rels == nullptr || syms == nullptr || shdr.sh_entsize == 0) continue;
    size_t n = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < n; ++i) {
      GElf_Rela rela;
      if (gelf_getrela(rels, static_cast<int>(i), &rela) == nullptr) break;
      auto type = GELF_R_TYPE(rela.r_info);
      if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) continue;
      GElf_Sym sym;
      if (GELF_R_SYM(rela.r_info) == 0 ||
          gelf_getsym(syms, static_cast<int>(GELF_R_SYM(rela.r_info)), &sym) == nullptr)
        continue;
      const char* name = elf_strptr(elf, symshdr.sh_link, sym.st_name);
      if (name != nullptr && name[0] != '\0') slots.try_emplace(rela.r_offset, name);
    }
  }
  return slots;
}

// x86-64's PLT stubs (.plt, .plt.sec, .plt.got), named "func@plt" after the
// function they jump to, as perf and objdump name them: no symbol covers
// them, and a sample in one would otherwise be "[unknown]" in the middle of
// a program's own frames. A stub jumps through its GOT slot with
// `jmp *disp32(%rip)` (ff 25), after an endbr64 (f3 0f 1e fa) and a bnd
// prefix (f2) when built for CET; the slot's relocation names the function.
// A lazy .plt's stubs of a CET build (endbr64, push, jmp to the first entry)
// and the first entry itself name nothing, and stay unnamed, as objdump
// leaves them. to_rel: what turns an ELF address into one relative to the
// load bias.
void add_plt_stubs(FunctionTable& t, Elf* elf, uint64_t to_rel) {
  GElf_Ehdr ehdr;
  size_t shstrndx;
  if (elf == nullptr || gelf_getehdr(elf, &ehdr) == nullptr || ehdr.e_machine != EM_X86_64 ||
      elf_getshdrstrndx(elf, &shstrndx) != 0)
    return;
  std::unordered_map<uint64_t, std::string> slots;
  bool slots_read = false;
  for (Elf_Scn* scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr || shdr.sh_type != SHT_PROGBITS) continue;
    const char* name = elf_strptr(elf, shstrndx, shdr.sh_name);
    if (name == nullptr || !std::string_view(name).starts_with(".plt")) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (data == nullptr || data->d_buf == nullptr || data->d_size < shdr.sh_size) continue;
    // The linker sets an entry size on .plt.sec and .plt.got; a lazy .plt's
    // entries are 16 bytes.
    uint64_t entsize = shdr.sh_entsize >= 8 ? shdr.sh_entsize : 16;
    if (!slots_read) {
      slots = got_slots(elf);
      slots_read = true;
    }
    if (slots.empty()) return;
    const auto* bytes = static_cast<const unsigned char*>(data->d_buf);
    for (uint64_t off = 0; off + entsize <= shdr.sh_size; off += entsize) {
      const unsigned char* e = bytes + off;
      uint64_t at = 0;
      if (e[0] == 0xf3 && e[1] == 0x0f && e[2] == 0x1e && e[3] == 0xfa) at = 4;
      if (at < entsize && e[at] == 0xf2) ++at;
      if (at + 6 > entsize || e[at] != 0xff || e[at + 1] != 0x25) continue;
      int32_t disp;
      std::memcpy(&disp, e + at + 2, sizeof disp);
      uint64_t slot = shdr.sh_addr + off + at + 6 + static_cast<uint64_t>(int64_t{disp});
      auto it = slots.find(slot);
      if (it == slots.end()) continue;
      std::string stub = it->second + "@plt";
      uint64_t rel = shdr.sh_addr + off + to_rel;
      t.add(rel, rel + entsize, true, stub, alias_rank(0, stub));
    }
  }
}

}  // namespace

std::shared_ptr<FunctionTable> FunctionTable::of(Dwfl_Module* mod, uint64_t bias) {
  auto t = std::make_shared<FunctionTable>();
  int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf* elf;
    Dwarf_Addr sym_bias;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &sym_bias);
    // '$' starts ARM/AArch64 mapping symbols ($x, $d), which are no names.
    if (name == nullptr || name[0] == '\0' || name[0] == '$') continue;
    if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
    auto shdr = section(elf, shndx);
    // Hand-written assembly often leaves its functions untyped; keep those,
    // but no labels of data.
    if (type == STT_NOTYPE && (!shdr || (shdr->sh_flags & SHF_EXECINSTR) == 0)) continue;
    uint64_t rel = addr - bias;
    uint64_t end = UINT64_MAX;
    if (sym.st_size != 0) {
      end = rel + sym.st_size;
    } else if (shdr) {
      // A label ("_etext") would otherwise own everything up to the next
      // symbol, the rest of the module included. sym_bias maps the file the
      // symbol came from (maybe separate debuginfo) into the process.
      end = shdr->sh_addr + shdr->sh_size + sym_bias - bias;
    }
    // Symbol versions ("clock_gettime@@GLIBC_2.17" in a .symtab) are not
    // part of the function's name as bcc and perf print it.
    std::string_view plain(name);
    plain = plain.substr(0, plain.find('@'));
    t->add(rel, end, sym.st_size != 0, plain, rank(sym, name));
  }
  // The stubs live in the file itself (dwfl_module_getelf), not in the
  // separate debuginfo the symbols may have come from.
  GElf_Addr elf_bias = 0;
  if (Elf* file = dwfl_module_getelf(mod, &elf_bias)) add_plt_stubs(*t, file, elf_bias - bias);
  t->finish();
  return t;
}

void FunctionTable::add(uint64_t rel, uint64_t end, bool sized, std::string_view name, int rank) {
  funcs_.push_back({rel, end, sized, static_cast<uint32_t>(names_.size()), rank});
  names_.append(name).push_back('\0');
}

void FunctionTable::finish() {
  auto& f = funcs_;
  // Among aliases: the best rank, then a sized one, then the first listed.
  std::sort(f.begin(), f.end(), [](const Func& a, const Func& b) {
    return std::tie(a.rel, a.rank, b.sized, a.name) < std::tie(b.rel, b.rank, a.sized, b.name);
  });
  f.erase(
      std::unique(f.begin(), f.end(), [](const Func& a, const Func& b) { return a.rel == b.rel; }),
      f.end());
  // A sizeless label inside a sized function (a loop label in assembly)
  // would steal the rest of that function: drop it, as libdwfl prefers a
  // sized symbol that contains the address.
  uint64_t covered = 0;
  f.erase(std::remove_if(f.begin(), f.end(),
                         [&](const Func& x) {
                           bool inside = !x.sized && x.rel < covered;
                           if (x.sized) covered = std::max(covered, x.end);
                           return inside;
                         }),
          f.end());
  f.shrink_to_fit();
}

std::optional<FunctionTable::Found> FunctionTable::find(uint64_t rel) {
  auto it = std::upper_bound(funcs_.begin(), funcs_.end(), rel,
                             [](uint64_t v, const Func& f) { return v < f.rel; });
  if (it == funcs_.begin()) return std::nullopt;
  --it;
  // Past a function's end is padding or code no symbol describes (a static
  // function in a stripped library): blaming the function before would be
  // wrong.
  if (rel >= it->end) return std::nullopt;
  return Found{it->rel, name(static_cast<size_t>(it - funcs_.begin()))};
}

std::string_view FunctionTable::name(size_t i) {
  const char* raw = names_.data() + funcs_[i].name;
  auto [it, fresh] = demangled_.try_emplace(static_cast<uint32_t>(i));
  if (fresh) it->second = demangle(raw);
  return it->second ? std::string_view(*it->second) : std::string_view(raw);
}

std::shared_ptr<FunctionTable> FunctionTables::of(Dwfl_Module* mod, uint64_t bias,
                                                  const std::optional<FileKey>& key) {
  if (key) {
    if (auto shared = tables_[*key].lock()) return shared;
  }
  auto t = FunctionTable::of(mod, bias);
  if (key) tables_[*key] = t;
  return t;
}

}  // namespace tracekit::symbols
