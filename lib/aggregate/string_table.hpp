// Interns short strings (process names) to dense 32-bit ids.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tracekit::aggregate {

class StringTable {
 public:
  // The id of s, adding it the first time. Ids are dense, from 0.
  uint32_t intern(std::string_view s);
  // The string of id; id must come from intern() of this table.
  std::string_view str(uint32_t id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }

 private:
  std::deque<std::string> strings_;  // deque: elements never move
  std::unordered_map<std::string_view, uint32_t> ids_;  // views into strings_
};

}  // namespace tracekit::aggregate
