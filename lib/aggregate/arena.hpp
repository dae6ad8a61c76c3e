// Word storage that never moves: 64 KiB chunks handed out front to back.
// Internal to lib/aggregate (the stack and signature tables store their
// records in one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tracekit::aggregate {

class Arena {
 public:
  // words uninitialized words, valid as long as the arena.
  uint64_t* allocate(size_t words);
  // Gives back the newest allocation, p of words words (a record that turned
  // out not to be needed).
  void release_last(uint64_t* p, size_t words);

 private:
  static constexpr size_t kChunkWords = 8192;
  // Records this long get a chunk of their own rather than abandoning the
  // current chunk's tail (perf stacks are at most a few hundred frames).
  static constexpr size_t kOwnChunkWords = kChunkWords / 4;

  std::vector<std::unique_ptr<uint64_t[]>> chunks_;  // shared by short records
  std::vector<std::unique_ptr<uint64_t[]>> own_;     // one long record each
  uint64_t* free_ = nullptr;                         // unused tail of the newest chunk
  size_t free_words_ = 0;
};

}  // namespace tracekit::aggregate
