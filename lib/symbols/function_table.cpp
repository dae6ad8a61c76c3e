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
#include <tuple>

#include "symbols/symbol.hpp"

namespace tracekit::symbols {

namespace {

// The demangled name, as perf shows it (with parameter types); nullopt when
// name is no mangled C++ name.
std::optional<std::string> demangle(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return std::nullopt;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return std::nullopt;
  std::string out(d);
  std::free(d);
  return out;
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
