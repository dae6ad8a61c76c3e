#include "util/backlog.hpp"

namespace tracekit {

bool Backlog::hold(uint64_t tag, std::span<const uint8_t> bytes) {
  if (data_.size() + bytes.size() > max_) return false;
  entries_.push_back({tag, data_.size(), bytes.size()});
  data_.insert(data_.end(), bytes.begin(), bytes.end());
  return true;
}

size_t Backlog::replay(const std::function<void(uint64_t, std::span<const uint8_t>)>& fn) {
  // Taken out first: what fn holds waits for the next replay.
  std::vector<uint8_t> data = std::move(data_);
  std::vector<Entry> entries = std::move(entries_);
  data_.clear();
  entries_.clear();
  for (const Entry& e : entries) fn(e.tag, std::span<const uint8_t>(data).subspan(e.offset, e.size));
  return entries.size();
}

}  // namespace tracekit
