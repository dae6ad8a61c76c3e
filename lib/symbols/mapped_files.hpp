// The files behind added mappings (UserSymbols::add_mapping): found when
// the mapping is added, by its path checked with stat(), shared by file
// identity among every process mapping them, and read through a
// short-lived one-file libdwfl session (their functions, PT_LOAD segments
// and build-id) at the first lookup that needs them. A file only the live
// process still reaches (through /proc/PID/map_files or /proc/PID/root) is
// read at once. "[vdso]" is this process's own vDSO. Internal to
// lib/symbols.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "symbols/file_key.hpp"
#include "symbols/function_table.hpp"
#include "symbols/segments.hpp"

namespace tracekit::symbols {

// A path pid's mapping of a file can be read from (mapped_paths).
struct MappedPath {
  std::string path;
  bool live = false;  // through the live process (/proc/PID/...)
};

// The paths where the file pid mapped at [start, end) from path can be
// read, in the order to try them: path itself; then through the live
// process, /proc/PID/map_files/START-END (the kernel names the mapped
// inode so, whatever its path now) and /proc/PID/root/PATH (another mount
// namespace). A deleted file ("PATH (deleted)") only by map_files. None
// for a path that is no file ("//anon", "[heap]", "[vdso]"). Pure.
std::vector<MappedPath> mapped_paths(pid_t pid, uint64_t start, uint64_t end,
                                     std::string_view path);

// What an added mapping needs of its file: its functions, and its segments
// to turn a file offset into an ELF address.
struct LoadedFile {
  std::shared_ptr<FunctionTable> table;
  Segments segments;
  std::vector<uint8_t> build_id;
};

// A file some process mapped, shared by every process mapping it.
struct MappedFile {
  std::optional<FileKey> key;  // what stat() said when added; none for the vDSO
  std::string name;            // the path the process mapped: the module name
  std::string open_path;       // where to read it from
  bool tried = false;
  std::optional<LoadedFile> loaded;  // once tried, if it could be read
};

class MappedFiles {
 public:
  // Tables are shared through tables, which must outlive this.
  explicit MappedFiles(FunctionTables& tables) : tables_(tables) {}

  // The file pid mapped at [start, end) from path, as add_mapping tells it
  // (inode ino, when not 0); null when path is no file or it cannot be
  // found (see UserSymbols::add_mapping).
  std::shared_ptr<MappedFile> find(pid_t pid, uint64_t start, uint64_t end, std::string_view path,
                                   uint64_t ino);
  // f's contents, read at the first call; null when f cannot be read or is
  // no longer the file that was found.
  const LoadedFile* loaded(MappedFile& f);
  // Forgets key's file if nobody holds it any more.
  void drop_unused(const FileKey& key) { symbols::drop_unused(files_, key); }

 private:
  std::shared_ptr<MappedFile> read_now(const std::string& open_path, std::string_view name,
                                       uint64_t ino);
  std::shared_ptr<MappedFile> own_vdso(uint64_t len);
  std::optional<LoadedFile> load(const MappedFile& f);
  std::optional<LoadedFile> loaded_from(Dwfl_Module* mod, const std::optional<FileKey>& key);

  FunctionTables& tables_;
  ByFile<MappedFile> files_;
  bool vdso_tried_ = false;
  uint64_t vdso_len_ = 0;
  std::shared_ptr<MappedFile> vdso_;  // this process's vDSO
};

}  // namespace tracekit::symbols
