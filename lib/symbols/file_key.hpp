// Which file on disk an ELF file was read from (device, inode, size, mtime):
// what user-space symbol tables and mapped files are shared by, among every
// process mapping the file, and what tells a file replaced at its path from
// the one that was mapped. Internal to lib/symbols.
#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

namespace tracekit::symbols {

struct FileKey {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_ns;
  bool operator==(const FileKey&) const = default;
};

inline FileKey key_of(const struct stat& st) {
  return FileKey{st.st_dev, st.st_ino, st.st_size,
                 st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
}

struct FileKeyHash {
  size_t operator()(const FileKey& k) const {
    size_t h = std::hash<uint64_t>()(k.ino);
    h ^= std::hash<uint64_t>()(k.dev) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<int64_t>()(k.mtime_ns) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  }
};

// Things shared by file: one lives as long as someone holds it.
template <class T>
using ByFile = std::unordered_map<FileKey, std::weak_ptr<T>, FileKeyHash>;

// Drops key's entry once nobody holds its thing any more.
template <class T>
void drop_unused(ByFile<T>& by_file, const FileKey& key) {
  auto it = by_file.find(key);
  if (it != by_file.end() && it->second.expired()) by_file.erase(it);
}

}  // namespace tracekit::symbols
