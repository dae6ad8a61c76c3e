// How this works: each file is a MappedFile shared by every process mapping
// it, found by the same FileKey as the function tables. It is stat()ed when
// its mapping is added (cheap, and it catches a file replaced or hidden in
// another mount namespace while the process may still be alive to read it
// from) and opened, through a short-lived one-module Dwfl, at the first
// lookup that lands in it; the Dwfl is gone once its table and segments
// are taken.
#include "symbols/mapped_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "symbols/dwfl_session.hpp"

namespace tracekit::symbols {

namespace {

// The length of this process's [vDSO] mapping, or 0.
uint64_t own_vdso_len() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (!line.ends_with("[vdso]")) continue;
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2 && hi > lo) return hi - lo;
  }
  return 0;
}

}  // namespace

std::vector<MappedPath> mapped_paths(pid_t pid, uint64_t start, uint64_t end,
                                     std::string_view path) {
  // "//anon" (perf's name for anonymous memory), "[heap]", "[vdso]", ...
  if (path.empty() || path[0] != '/' || path.starts_with("//")) return {};
  const std::string proc = "/proc/" + std::to_string(pid);
  char range[48];
  std::snprintf(range, sizeof range, "/map_files/%llx-%llx", static_cast<unsigned long long>(start),
                static_cast<unsigned long long>(end));
  if (is_deleted(path)) return {{proc + range, true}};
  return {{std::string(path), false}, {proc + range, true}, {proc + "/root" + std::string(path), true}};
}

std::shared_ptr<MappedFile> MappedFiles::find(pid_t pid, uint64_t start, uint64_t end,
                                              std::string_view path, uint64_t ino) {
  if (path == "[vdso]") return own_vdso(end - start);
  for (const MappedPath& p : mapped_paths(pid, start, end, path)) {
    if (p.live) {
      // Deleted, replaced, or in another mount namespace: only the live
      // process still reaches the file, so read it now.
      if (auto f = read_now(p.path, path, ino)) return f;
      continue;
    }
    struct stat st;
    if (stat(p.path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && (ino == 0 || st.st_ino == ino)) {
      FileKey key = key_of(st);
      auto& slot = files_[key];
      if (auto f = slot.lock()) return f;
      auto f = std::make_shared<MappedFile>();
      f->key = key;
      f->name = p.path;
      f->open_path = p.path;
      slot = f;
      return f;
    }
  }
  return nullptr;
}

std::shared_ptr<MappedFile> MappedFiles::read_now(const std::string& open_path,
                                                  std::string_view name, uint64_t ino) {
  struct stat st;
  if (stat(open_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (ino != 0 && st.st_ino != ino))
    return nullptr;
  FileKey key = key_of(st);
  auto& slot = files_[key];
  if (auto f = slot.lock()) {
    // The same inode, added before under another path: read it now if it
    // was waiting, while open_path works.
    if (!f->tried) {
      f->open_path = open_path;
      loaded(*f);
    }
    return f;
  }
  auto f = std::make_shared<MappedFile>();
  f->key = key;
  f->name = std::string(name);
  f->open_path = open_path;
  loaded(*f);
  slot = f;
  return f;
}

// Every 64-bit process of this kernel maps the same vDSO image, so ours
// stands for theirs; a vDSO of another length (a 32-bit process's) does not.
std::shared_ptr<MappedFile> MappedFiles::own_vdso(uint64_t len) {
  if (!vdso_tried_) {
    vdso_tried_ = true;
    vdso_len_ = own_vdso_len();
    Dwfl_Module* found = nullptr;
    DwflPtr dwfl = vdso_len_ != 0 ? report_process(getpid()) : DwflPtr(nullptr, &dwfl_end);
    if (dwfl)
      dwfl_getmodules(
          dwfl.get(),
          [](Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, void* arg) -> int {
            if (std::strncmp(name, "[vdso", 5) != 0) return DWARF_CB_OK;
            *static_cast<Dwfl_Module**>(arg) = mod;
            return DWARF_CB_ABORT;
          },
          &found, 0);
    if (found != nullptr) {
      auto f = std::make_shared<MappedFile>();
      f->name = "[vdso]";
      f->tried = true;
      f->loaded = loaded_from(found, std::nullopt);
      if (f->loaded) vdso_ = std::move(f);
    }
  }
  return len == vdso_len_ ? vdso_ : nullptr;
}

const LoadedFile* MappedFiles::loaded(MappedFile& f) {
  if (!f.tried) {
    f.tried = true;
    f.loaded = load(f);
  }
  return f.loaded ? &*f.loaded : nullptr;
}

std::optional<LoadedFile> MappedFiles::load(const MappedFile& f) {
  // O_NONBLOCK: a FIFO put at the path since must not hang us.
  int fd = open(f.open_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  // Still the file stat() saw when the mapping was added?
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f.key && !(key_of(st) == *f.key))) {
    close(fd);
    return std::nullopt;
  }
  FileSession s = report_file(f.name, f.open_path, fd);
  if (s.module == nullptr) return std::nullopt;
  return loaded_from(s.module, f.key);
}

std::optional<LoadedFile> MappedFiles::loaded_from(Dwfl_Module* mod,
                                                   const std::optional<FileKey>& key) {
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  size_t n = 0;
  if (elf == nullptr || elf_getphdrnum(elf, &n) != 0) return std::nullopt;
  LoadedFile lf;
  lf.segments = Segments::of(elf);
  const unsigned char* bits = nullptr;
  GElf_Addr note_vaddr;
  int len = dwfl_module_build_id(mod, &bits, &note_vaddr);
  if (len > 0) lf.build_id.assign(bits, bits + len);
  lf.table = tables_.of(mod, bias, key);
  return lf;
}

}  // namespace tracekit::symbols
