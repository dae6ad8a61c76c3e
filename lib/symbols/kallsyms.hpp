// Kernel symbols from /proc/kallsyms: a table sorted by address, searched
// with a binary search. Parsing never does I/O; load() reads the file.
//
// /proc/kallsyms takes the kernel 50-150 ms to list here (120,000 lines),
// more than a tool's whole start-up budget, so load() of /proc/kallsyms
// checks the file (readable, real addresses) from its first lines and
// returns at once; the rest is read and parsed in a background thread, once
// per process, and every KernelSymbols loaded from it shares that table.
// The first call that needs the table (lookup, size, text_range) waits for
// it: a tool prints its ready line while the table is still loading.
#pragma once

#include <cstdint>
#include <future>
#include <initializer_list>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/symbol.hpp"
#include "util/result.hpp"

namespace tracekit::symbols {

// Whether /proc/kallsyms (or path) names a text symbol (t or T) of one of
// these names: one pass over the file, nothing kept (for a tool's start-up
// checks: a function the kernel was built without). core_text_only: stop
// at _etext, the end of vmlinux' core text (its init text, data symbols
// and modules follow: 5,000 of the 121,000 lines of a 6.18 kernel, so
// about 40 ms of system time either way).
bool kernel_has_text_symbol(std::initializer_list<std::string_view> names,
                            bool core_text_only = false,
                            const std::string& path = "/proc/kallsyms");

class KernelSymbols {
 public:
  KernelSymbols() = default;

  // Parses kallsyms text ("ffffffff81000000 T _stext", optional
  // "\t[module]"). Keeps text symbols (t/T/w/W) and skips zero addresses
  // (what a non-root reader or kptr_restrict shows).
  static KernelSymbols parse(std::istream& in);
  static KernelSymbols parse(std::string_view text);
  // Reads and parses path. Error: cannot read, or no usable address in it
  // (hint: run as root / kernel.kptr_restrict). /proc/kallsyms: see the top
  // of this file (checked now, parsed in the background, shared).
  static Result<KernelSymbols> load(const std::string& path = "/proc/kallsyms");

  // The symbol containing addr: the one with the greatest start <= addr.
  // return_address: addr is a return address (every callchain frame but the
  // first), so addr-1 is looked up; the offset is still from addr. nullopt
  // below the first symbol, and past the end of vmlinux text ("_etext",
  // "_einittext") for vmlinux symbols. A module's last symbol has no known
  // end and extends to the next symbol (or forever, for the very last).
  std::optional<Resolved> lookup(uint64_t addr, bool return_address = false) const;

  // Whether addr lies above vmlinux's image (its highest symbol of any
  // type, data and bss included): module space, where modules and the
  // trampolines ftrace and kprobes allocate live. False when kallsyms did
  // not tell where the image ends.
  bool past_image(uint64_t addr) const {
    return table().image_end != 0 && addr > table().image_end;
  }

  size_t size() const { return table().syms.size(); }
  // Whether the table is there: lookups answer without waiting for the
  // background load (true for an empty or a parsed table too).
  bool loaded() const;

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
  struct Table {
    std::vector<Sym> syms;            // sorted by addr, one per address
    std::string names;                // NUL-separated names; offset 0 is ""
    std::vector<uint64_t> text_ends;  // sorted "_etext"/"_einittext" addresses
    uint64_t image_end = 0;           // vmlinux's highest address (any symbol type), 0: unknown
  };
  static Table parse_table(std::string_view text);
  // The table, once loaded (waits for a background load).
  const Table& table() const {
    if (!table_) resolve();
    return *table_;
  }
  void resolve() const;

  mutable std::shared_ptr<const Table> table_;  // null until resolved
  mutable std::shared_future<std::shared_ptr<const Table>> pending_;  // background load
};

}  // namespace tracekit::symbols
