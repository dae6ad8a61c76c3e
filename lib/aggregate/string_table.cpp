// Strings live in a deque, whose elements never move, so the map's
// string_view keys (which point into those strings, short-string buffer
// included) stay valid however many strings are added.
#include "aggregate/string_table.hpp"

namespace tracekit::aggregate {

uint32_t StringTable::intern(std::string_view s) {
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(strings_.size());
  const std::string& stored = strings_.emplace_back(s);
  ids_.emplace(stored, id);
  return id;
}

}  // namespace tracekit::aggregate
