// How this works: added mappings need no libdwfl session per process: a
// mapping is (start, end, pgoff, file), and an address becomes a file
// offset, then an ELF address through the file's PT_LOAD segments, which is
// exactly what the function tables are keyed by (addresses relative to the
// load bias). The files are MappedFiles, shared among processes.
#include "symbols/mapping_set.hpp"

#include <algorithm>

#include "symbols/build_id.hpp"

namespace tracekit::symbols {

void MappingSet::add(Mapping m) {
  std::vector<Mapping> out;
  out.reserve(maps_.size() + 2);
  for (Mapping& e : maps_) {
    if (e.end <= m.start || e.start >= m.end) {
      out.push_back(std::move(e));
      continue;
    }
    bool kept = false;
    if (e.start < m.start) {
      Mapping left = e;
      left.end = m.start;
      out.push_back(std::move(left));
      kept = true;
    }
    if (e.end > m.end) {
      Mapping right = e;
      right.pgoff += m.end - e.start;
      right.start = m.end;
      out.push_back(std::move(right));
      kept = true;
    }
    if (!kept && e.file && std::find(retired_.begin(), retired_.end(), e.file) == retired_.end())
      retired_.push_back(std::move(e.file));
  }
  out.push_back(std::move(m));
  std::sort(out.begin(), out.end(),
            [](const Mapping& a, const Mapping& b) { return a.start < b.start; });
  maps_ = std::move(out);
}

const Mapping* MappingSet::holding(uint64_t addr) const {
  auto m = std::upper_bound(maps_.begin(), maps_.end(), addr,
                            [](uint64_t v, const Mapping& x) { return v < x.start; });
  if (m == maps_.begin()) return nullptr;
  --m;
  return addr < m->end && m->file ? &*m : nullptr;
}

std::optional<FileMapping> MappingSet::mapping(uint64_t addr, MappedFiles& files) const {
  const Mapping* m = holding(addr);
  if (m == nullptr) return std::nullopt;
  FileMapping out{m->start, m->end, m->pgoff, m->file->name, {}};
  if (m->build_id_size != 0) {
    out.build_id = hex_string(std::span(m->build_id.data(), m->build_id_size));
  } else if (const LoadedFile* f = files.loaded(*m->file)) {
    out.build_id = hex_string(f->build_id);
  }
  return out;
}

std::optional<Resolved> MappingSet::lookup(uint64_t addr, MappedFiles& files) const {
  const Mapping* m = holding(addr);
  if (m == nullptr) return std::nullopt;
  const LoadedFile* f = files.loaded(*m->file);
  if (f == nullptr || !f->table) return std::nullopt;
  if (m->build_id_size != 0 &&
      !std::equal(m->build_id.begin(), m->build_id.begin() + m->build_id_size, f->build_id.begin(),
                  f->build_id.end()))
    return std::nullopt;
  auto vaddr = f->segments.vaddr(addr - m->start + m->pgoff);
  if (!vaddr) return std::nullopt;
  auto found = f->table->find(*vaddr);
  if (!found) return std::nullopt;
  return Resolved{found->name, *vaddr - found->rel_start, m->file->name};
}

void MappingSet::files(std::vector<FileKey>& out) const {
  for (const Mapping& m : maps_)
    if (m.file && m.file->key) out.push_back(*m.file->key);
  for (const auto& f : retired_)
    if (f->key) out.push_back(*f->key);
}

}  // namespace tracekit::symbols
