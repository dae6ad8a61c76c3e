// One process's added mappings (UserSymbols::add_mapping, from
// PERF_RECORD_MMAP2), kept disjoint and sorted by start: a newer mapping
// hides what it overlaps of older ones (MAP_FIXED, dlclose + dlopen). An
// address resolves through its mapping's file: address -> file offset ->
// ELF address (PT_LOAD segments) -> function. Internal to lib/symbols.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "symbols/file_key.hpp"
#include "symbols/mapped_files.hpp"
#include "symbols/symbol.hpp"

namespace tracekit::symbols {

// [start, end) maps the file from file offset pgoff.
struct Mapping {
  uint64_t start = 0, end = 0, pgoff = 0;
  std::shared_ptr<MappedFile> file;  // null: resolves nothing (but hides what it covers)
  uint8_t build_id_size = 0;         // the build-id the mapping record gave, if any
  std::array<uint8_t, 20> build_id{};
};

class MappingSet {
 public:
  // Adds m over the mappings it overlaps: what is left of those keeps its
  // file offsets. m.start < m.end.
  void add(Mapping m);

  // The function holding addr, its offset counted from addr, through the
  // mapping that holds it and that mapping's file, read through files if
  // not yet. nullopt when no mapping holds addr, its file cannot be read or
  // has another build-id than the mapping record gave, or no function
  // there is known. Names live as long as this set.
  std::optional<Resolved> lookup(uint64_t addr, MappedFiles& files) const;

  // The mapping that holds addr, if its file is known (see
  // UserSymbols::mapping); its build-id is the record's, else the file's.
  std::optional<FileMapping> mapping(uint64_t addr, MappedFiles& files) const;
  // Whether mapping() has an answer for addr, at the cost of a search.
  bool holds(uint64_t addr) const { return holding(addr) != nullptr; }

  // Appends the files of the mappings and of those replaced since, whose
  // names may still be held.
  void files(std::vector<FileKey>& out) const;

  const std::vector<Mapping>& mappings() const { return maps_; }

 private:
  // The mapping holding addr, if it has a file.
  const Mapping* holding(uint64_t addr) const;

  std::vector<Mapping> maps_;  // sorted by start, not overlapping
  // Files of mappings replaced since: names from their tables may be held.
  std::vector<std::shared_ptr<MappedFile>> retired_;
};

}  // namespace tracekit::symbols
