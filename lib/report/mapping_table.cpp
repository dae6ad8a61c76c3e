// How this works: a user address is first looked for among the ranges this
// table already has for its process (most frames of a report fall in a few
// mappings), then asked of UserSymbols::mapping(), whose answer is entered
// under its identity (pid, range, offset, path). Kernel addresses go by the
// module kallsyms gives them; each image's range and build-id are found
// once.
#include "report/mapping_table.hpp"

#include <algorithm>

#include "symbols/build_id.hpp"

namespace tracekit::report {

int32_t MappingTable::user(uint32_t pid, uint64_t addr) {
  if (user_ == nullptr) return -1;
  std::vector<Known>& known = known_[pid];
  auto it = std::upper_bound(known.begin(), known.end(), addr,
                             [](uint64_t a, const Known& k) { return a < k.start; });
  if (it != known.begin() && addr < std::prev(it)->end) return std::prev(it)->index;

  auto m = user_->mapping(static_cast<pid_t>(pid), addr);
  if (!m) return -1;
  auto [slot, fresh] =
      by_key_.try_emplace({pid, m->start, m->end, m->offset, std::string(m->path)}, 0);
  if (fresh) {
    slot->second = static_cast<int32_t>(mappings_.size());
    mappings_.push_back({m->start, m->end, m->offset, std::string(m->path), m->build_id, false});
    // Overlapping ranges (a mapping replaced since) are not cached: the
    // sorted list stays disjoint, and such addresses ask UserSymbols again.
    auto pos = std::upper_bound(known.begin(), known.end(), m->start,
                                [](uint64_t a, const Known& k) { return a < k.start; });
    bool overlaps = (pos != known.end() && pos->start < m->end) ||
                    (pos != known.begin() && std::prev(pos)->end > m->start);
    if (!overlaps) known.insert(pos, {m->start, m->end, slot->second});
  }
  return slot->second;
}

int32_t MappingTable::kernel(uint64_t addr) {
  if (kernel_ == nullptr) return -1;
  std::string module;
  if (auto r = kernel_->lookup(addr)) {
    module = std::string(r->module);
  } else {
    // No symbol there: still vmlinux if inside its text.
    auto text = kernel_->text_range();
    if (!text || addr < text->start || addr >= text->end) return -1;
  }
  auto [slot, fresh] = by_module_.try_emplace(module, 0);
  if (fresh) {
    auto range = kernel_->text_range(module);
    Mapping m;
    m.start = range ? range->start : addr;
    m.limit = range ? range->end : addr + 1;
    m.file = module.empty() ? "[kernel.kallsyms]" : "[" + module + "]";
    m.build_id = symbols::kernel_build_id(module);
    m.kernel = true;
    slot->second = static_cast<int32_t>(mappings_.size());
    mappings_.push_back(std::move(m));
  }
  return slot->second;
}

std::vector<Mapping> MappingTable::take() {
  std::vector<Mapping> out = std::move(mappings_);
  mappings_.clear();
  by_key_.clear();
  known_.clear();
  by_module_.clear();
  return out;
}

}  // namespace tracekit::report
