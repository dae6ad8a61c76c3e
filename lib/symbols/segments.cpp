#include "symbols/segments.hpp"

namespace tracekit::symbols {

Segments Segments::of(Elf* elf) {
  std::vector<Segment> s;
  size_t n = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &n) != 0) return Segments();
  for (size_t i = 0; i < n; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf, static_cast<int>(i), &ph) != nullptr && ph.p_type == PT_LOAD)
      s.push_back({ph.p_offset, ph.p_filesz, ph.p_vaddr, (ph.p_flags & PF_X) != 0});
  }
  return Segments(std::move(s));
}

std::optional<uint64_t> Segments::vaddr(uint64_t off) const {
  const Segment* best = nullptr;
  for (const Segment& s : segments_)
    if (off >= s.offset && off - s.offset < s.filesz && (best == nullptr || (s.exec && !best->exec)))
      best = &s;
  if (best == nullptr) return std::nullopt;
  return best->vaddr + (off - best->offset);
}

std::optional<Segment> Segments::holding(uint64_t addr) const {
  const Segment* found = nullptr;
  for (const Segment& s : segments_)
    if (addr >= s.vaddr && addr - s.vaddr < s.filesz) found = &s;
  if (found == nullptr) return std::nullopt;
  return *found;
}

std::optional<uint64_t> Segments::offset(uint64_t addr) const {
  auto s = holding(addr);
  if (!s) return std::nullopt;
  return addr - s->vaddr + s->offset;
}

}  // namespace tracekit::symbols
