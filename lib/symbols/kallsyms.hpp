// Kernel symbols from /proc/kallsyms: a table sorted by address, searched
// with a binary search. Parsing never does I/O; load() reads the file.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/symbol.hpp"
#include "util/result.hpp"

namespace tracekit::symbols {

class KernelSymbols {
 public:
  KernelSymbols() = default;

  // Parses kallsyms text ("ffffffff81000000 T _stext", optional
  // "\t[module]"). Keeps text symbols (t/T/w/W) and skips zero addresses
  // (what a non-root reader or kptr_restrict shows).
  static KernelSymbols parse(std::istream& in);
  static KernelSymbols parse(std::string_view text);
  // Reads and parses path. Error: cannot read, or no usable address in it
  // (hint: run as root / kernel.kptr_restrict).
  static Result<KernelSymbols> load(const std::string& path = "/proc/kallsyms");

  // The symbol containing addr: the one with the greatest start <= addr.
  // return_address: addr is a return address (every callchain frame but the
  // first), so addr-1 is looked up; the offset is still from addr. nullopt
  // below the first symbol, and past the end of vmlinux text ("_etext",
  // "_einittext") for vmlinux symbols. A module's last symbol has no known
  // end and extends to the next symbol (or forever, for the very last).
  std::optional<Resolved> lookup(uint64_t addr, bool return_address = false) const;

  size_t size() const { return syms_.size(); }

  // Where a module's text lies ("" for vmlinux), as far as kallsyms tells:
  // [its lowest symbol, end). vmlinux ends at its last text end marker
  // ("_etext", "_einittext"); a module, which has none, where the next
  // symbol of another module starts (every address lookup() gives to the
  // module lies within), or at UINT64_MAX when nothing follows. nullopt
  // when no symbol of module is known. Costs a pass over the table.
  struct Range {
    uint64_t start = 0, end = 0;
  };
  std::optional<Range> text_range(std::string_view module = "") const;

 private:
  struct Sym {
    uint64_t addr;
    uint32_t name;    // offset into names_
    uint32_t module;  // offset into names_ ("" = vmlinux)
  };
  std::vector<Sym> syms_;            // sorted by addr, one per address
  std::string names_;                // NUL-separated names; offset 0 is ""
  std::vector<uint64_t> text_ends_;  // sorted "_etext"/"_einittext" addresses
};

}  // namespace tracekit::symbols
