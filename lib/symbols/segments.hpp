// An ELF file's PT_LOAD segments: where its bytes sit in the file and at
// which ELF address they load. Turns file offsets (what a mapping and a
// uprobe speak) into ELF addresses (what symbol tables speak) and back.
#pragma once

#include <gelf.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace tracekit::symbols {

// File bytes [offset, offset + filesz) load at vaddr.
struct Segment {
  uint64_t offset = 0, filesz = 0, vaddr = 0;
  bool exec = false;
};

class Segments {
 public:
  Segments() = default;
  explicit Segments(std::vector<Segment> s) : segments_(std::move(s)) {}
  // The PT_LOAD segments of elf; none when its program headers cannot be read.
  static Segments of(Elf* elf);

  // The ELF address of file offset off; segments may share a page of the
  // file but not bytes, and code is preferred anyway. nullopt outside them.
  std::optional<uint64_t> vaddr(uint64_t off) const;
  // The file offset of ELF address addr (within a segment's file bytes).
  std::optional<uint64_t> offset(uint64_t addr) const;
  // The segment whose loaded file bytes hold ELF address addr; nullopt outside them.
  std::optional<Segment> holding(uint64_t addr) const;
  bool empty() const { return segments_.empty(); }

 private:
  std::vector<Segment> segments_;
};

}  // namespace tracekit::symbols
