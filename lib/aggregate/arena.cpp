#include "aggregate/arena.hpp"

namespace tracekit::aggregate {

uint64_t* Arena::allocate(size_t words) {
  if (words <= free_words_) {
    uint64_t* p = free_;
    free_ += words;
    free_words_ -= words;
    return p;
  }
  if (words >= kOwnChunkWords) {
    own_.push_back(std::make_unique_for_overwrite<uint64_t[]>(words));
    return own_.back().get();
  }
  chunks_.push_back(std::make_unique_for_overwrite<uint64_t[]>(kChunkWords));
  free_ = chunks_.back().get() + words;
  free_words_ = kChunkWords - words;
  return chunks_.back().get();
}

void Arena::release_last(uint64_t* p, size_t words) {
  if (words >= kOwnChunkWords) {
    if (!own_.empty() && own_.back().get() == p) own_.pop_back();
  } else if (p + words == free_) {
    free_ = p;
    free_words_ += words;
  }
}

}  // namespace tracekit::aggregate
