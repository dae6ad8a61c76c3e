// The functions of one ELF file, in a table sorted by address relative to
// the load bias and searched by bisection, with one name per address (the
// best of its aliases), demangled on first use. of() takes them from
// libdwfl's view of a module (.symtab, from the file or its separate
// debuginfo, else .dynsym), plus the file's x86-64 PLT stubs as
// "func@plt"; add() and finish() build a table from any
// list. FunctionTables shares one table per file among every process
// mapping it. Internal to lib/symbols.
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "symbols/file_key.hpp"

namespace tracekit::symbols {

class FunctionTable {
 public:
  struct Found {
    uint64_t rel_start;  // the function's start, relative to the load bias
    std::string_view name;
  };

  // The functions of mod, whose load bias is bias. Names are copied out of
  // libelf's data, so the table outlives the Dwfl it was built from.
  static std::shared_ptr<FunctionTable> of(Dwfl_Module* mod, uint64_t bias);

  // Adds the function [rel, end) (addresses relative to the load bias).
  // sized: end is rel + the symbol's size; else the symbol is a sizeless
  // label, and end is the end of its section (UINT64_MAX: unknown). Among
  // names of one address, the lowest rank wins (see alias_rank), then a
  // sized one, then the first added.
  void add(uint64_t rel, uint64_t end, bool sized, std::string_view name, int rank);
  // Chooses among aliases and sorts; once, after the last add().
  void finish();

  // The function containing rel (an address minus the load bias); nullopt
  // below the first function and past a function's end.
  std::optional<Found> find(uint64_t rel);
  size_t size() const { return funcs_.size(); }

 private:
  struct Func {
    uint64_t rel;
    uint64_t end;  // rel + size; for a sizeless label, the end of its section
    bool sized;
    uint32_t name;  // offset into names_
    int rank;       // among aliases at one address, the lowest wins
  };

  std::string_view name(size_t i);

  std::vector<Func> funcs_;
  std::string names_;  // NUL-separated, never appended to after finish()
  // Demangled on first use: most functions of a big library are never hit.
  std::unordered_map<uint32_t, std::optional<std::string>> demangled_;
};

// Function tables by file; a table lives as long as some process uses it.
class FunctionTables {
 public:
  // The table of mod (load bias bias), read from the file key: the one
  // already built for key if it is still in use, else built now and shared.
  // Without a key (the vDSO) it is built for the caller alone.
  std::shared_ptr<FunctionTable> of(Dwfl_Module* mod, uint64_t bias,
                                    const std::optional<FileKey>& key);
  // Forgets key's table if nobody uses it any more.
  void drop_unused(const FileKey& key) { symbols::drop_unused(tables_, key); }

 private:
  ByFile<FunctionTable> tables_;
};

}  // namespace tracekit::symbols
