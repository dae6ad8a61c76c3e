// What a symbol lookup returns, for kernel and user addresses alike.
#pragma once

#include <elf.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tracekit::symbols {

// A resolved address. name and module point into the symbolizer that
// returned it and stay valid until that symbolizer is destroyed (or, for
// UserSymbols, until forget() is called for the process).
struct Resolved {
  std::string_view name;    // demangled function name
  uint64_t offset = 0;      // address - symbol start
  std::string_view module;  // kernel module ("" for vmlinux) or user file path
  uint64_t size = 0;        // the symbol's size where known (kernel: to the next symbol), else 0
};

// The mapping of a file that holds an address (UserSymbols::mapping()).
struct FileMapping {
  uint64_t start = 0, end = 0;  // [start, end) in the process's address space
  uint64_t offset = 0;          // the file offset mapped at start
  std::string_view path;        // as the process mapped it; "[vdso]" for the vDSO
  std::string build_id;         // lower-case hex; "" when unknown
};

// Among names of one address (aliases), which to show: the lowest rank.
// preference orders what the symbol table says (strong over weak, global
// over local: each source ranks its own kinds), then the name with fewer
// leading underscores wins ("write" over "__libc_write").
inline int alias_rank(int preference, std::string_view name) {
  size_t underscores = name.find_first_not_of('_');
  if (underscores == std::string_view::npos) underscores = name.size();
  return preference * 1024 + static_cast<int>(underscores < 1023 ? underscores : 1023);
}

// An ELF symbol binding's preference among aliases: global (or GNU unique)
// 0, weak 1, local 2 (a library's internal names).
inline int elf_binding_preference(int binding) {
  return binding == STB_GLOBAL || binding == STB_GNU_UNIQUE ? 0 : binding == STB_WEAK ? 1 : 2;
}

}  // namespace tracekit::symbols
