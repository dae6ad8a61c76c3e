// How this works: each process gets its own libdwfl session (a Dwfl). At
// note_process() time dwfl_linux_proc_report() reads /proc/PID/auxv and
// /proc/PID/maps and records one module per mapped file, by path and address
// range; no ELF file is opened yet. ELF files are opened lazily, by our
// find_elf callback, on the first lookup that lands in a module, which is at
// report time, usually after the process has exited. That is fine for a file
// that still exists at its path, so the common case stays lazy: measured
// here, the report costs ~40-60 us per process, and opening every module's
// ELF at note time would add ~100 us more (17 modules for /usr/bin/sleep,
// most of them locale files no stack ever points into). What cannot wait is
// what only the live process can give, so note_process() loads these at once:
//  - the vDSO, which exists only in the process's memory (/proc/PID/mem);
//  - mappings of deleted files ("... (deleted)"), reachable only through
//    /proc/PID/map_files (root only);
//  - every file of a process in another mount namespace (a container, a
//    systemd service with a private /tmp): its paths mean something only
//    below /proc/PID/root, which vanishes with the process.
//
// Symbols: libdwfl's own address lookup (dwfl_module_addrinfo) scans the
// whole symbol table on every call, ~1 ms per lookup in libLLVM's 45,000
// symbols. Instead, the first lookup in a file takes its functions once from
// dwfl_module_getsymtab() (.symtab, from the file or its separate debuginfo,
// else .dynsym) into a sorted table searched by bisection. Tables are keyed
// by file identity (device, inode, size, mtime) and shared by every process
// mapping that file, so the second shell or worker process only pays for
// opening the file to learn its load bias. Addresses in the tables are
// relative to the load bias.
//
// Results are cached per (process, looked-up address). A process holds the
// tables it used, and names are views into them (or into its PerfMap), so
// they live until forget(pid). Addresses in no ELF file (JIT code) go to
// /tmp/perf-PID.map, read on the first such miss: by report time the JIT has
// written more of it than at note time.
//
// Added mappings (add_mapping, from PERF_RECORD_MMAP2) need no Dwfl per
// process: a mapping is (start, end, pgoff, file), and an address becomes a
// file offset, then an ELF address through the file's PT_LOAD segments,
// which is exactly what the symbol tables are keyed by (addresses relative
// to the load bias). Each file is a FileRef shared by every process mapping
// it, found by the same FileKey as the tables: it is stat()ed when added
// (cheap, and it catches a file replaced or hidden in another mount
// namespace while the process may still be alive to read it from) and
// opened, through a short-lived single-module Dwfl, at the first lookup
// that lands in it; the Dwfl is gone once its table and segments are taken.
#include "symbols/user.hpp"

#include <cxxabi.h>
#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "symbols/perf_map.hpp"
#include "symbols/segments.hpp"

namespace tracekit::symbols {

namespace {

constexpr std::string_view kDeletedSuffix = " (deleted)";

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The demangled name, as perf shows it (with parameter types); nullopt when
// name is no mangled C++ name.
std::optional<std::string> demangle(const char* name) {
  if (name[0] != '_' || name[1] != 'Z') return std::nullopt;
  int status = 0;
  char* d = abi::__cxa_demangle(name, nullptr, nullptr, &status);
  if (status != 0 || d == nullptr) return std::nullopt;
  std::string out(d);
  std::free(d);
  return out;
}

// Which file a module was loaded from, to share its symbol table.
struct FileKey {
  dev_t dev;
  ino_t ino;
  off_t size;
  int64_t mtime_ns;
  bool operator==(const FileKey&) const = default;
};

FileKey key_of(const struct stat& st) {
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

// The functions of one ELF file, sorted by address relative to the load
// bias. Names are copied out of libelf's data, so the table outlives the
// Dwfl it was built from.
class FuncTable {
 public:
  struct Found {
    uint64_t rel_start;
    std::string_view name;
  };

  static std::shared_ptr<FuncTable> build(Dwfl_Module* mod, uint64_t bias);

  // The function containing rel (an address minus the load bias).
  std::optional<Found> find(uint64_t rel) {
    auto it = std::upper_bound(funcs_.begin(), funcs_.end(), rel,
                               [](uint64_t v, const Func& f) { return v < f.rel; });
    if (it == funcs_.begin()) return std::nullopt;
    --it;
    // Past a function's end is padding or code no symbol describes (a static
    // function in a stripped library): blaming the function before would be
    // wrong.
    if (rel >= it->end) return std::nullopt;
    return Found{it->rel, name(static_cast<size_t>(it - funcs_.begin()))};
  }

 private:
  struct Func {
    uint64_t rel;
    uint64_t end;  // rel + size; for a sizeless label, the end of its section
    bool sized;
    uint32_t name;  // offset into names_
    int rank;       // among aliases at one address, the lowest wins
  };

  std::string_view name(size_t i) {
    const char* raw = names_.data() + funcs_[i].name;
    auto [it, fresh] = demangled_.try_emplace(static_cast<uint32_t>(i));
    if (fresh) it->second = demangle(raw);
    return it->second ? std::string_view(*it->second) : std::string_view(raw);
  }

  std::vector<Func> funcs_;
  std::string names_;  // NUL-separated, never appended to after build()
  // Demangled on first use: most functions of a big library are never hit.
  std::unordered_map<uint32_t, std::optional<std::string>> demangled_;
};

// Among aliases, libdwfl's choice: a global name over a weak one over a
// file-local one, since the local aliases are a library's internal names
// (glibc's debuginfo has "__GI___write" and "__libc_write" besides the weak
// "write"). Then a typed function over an assembler label, then the name
// with fewer leading underscores.
int rank(const GElf_Sym& sym, const char* name) {
  int preference = elf_binding_preference(GELF_ST_BIND(sym.st_info));
  if (GELF_ST_TYPE(sym.st_info) == STT_NOTYPE) preference += 3;
  return alias_rank(preference, name);
}

// The section a symbol is defined in, or nullopt.
std::optional<GElf_Shdr> section(Elf* elf, GElf_Word shndx) {
  GElf_Shdr shdr;
  Elf_Scn* scn = elf ? elf_getscn(elf, shndx) : nullptr;
  if (scn == nullptr || gelf_getshdr(scn, &shdr) == nullptr) return std::nullopt;
  return shdr;
}

std::shared_ptr<FuncTable> FuncTable::build(Dwfl_Module* mod, uint64_t bias) {
  auto t = std::make_shared<FuncTable>();
  int n = dwfl_module_getsymtab(mod);
  for (int i = 1; i < n; ++i) {
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf* elf;
    Dwarf_Addr sym_bias;
    const char* name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, &elf, &sym_bias);
    // '$' starts ARM/AArch64 mapping symbols ($x, $d), which are no names.
    if (name == nullptr || name[0] == '\0' || name[0] == '$') continue;
    if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE) continue;
    int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) continue;
    auto shdr = section(elf, shndx);
    // Hand-written assembly often leaves its functions untyped; keep those,
    // but no labels of data.
    if (type == STT_NOTYPE && (!shdr || (shdr->sh_flags & SHF_EXECINSTR) == 0)) continue;
    uint64_t rel = addr - bias;
    uint64_t end = UINT64_MAX;
    if (sym.st_size != 0) {
      end = rel + sym.st_size;
    } else if (shdr) {
      // A label ("_etext") would otherwise own everything up to the next
      // symbol, the rest of the module included. sym_bias maps the file the
      // symbol came from (maybe separate debuginfo) into the process.
      end = shdr->sh_addr + shdr->sh_size + sym_bias - bias;
    }
    t->funcs_.push_back(
        {rel, end, sym.st_size != 0, static_cast<uint32_t>(t->names_.size()), rank(sym, name)});
    // Symbol versions ("clock_gettime@@GLIBC_2.17" in a .symtab) are not
    // part of the function's name as bcc and perf print it.
    std::string_view plain(name);
    plain = plain.substr(0, plain.find('@'));
    t->names_.append(plain).push_back('\0');
  }
  auto& f = t->funcs_;
  // Among aliases: the best rank, then a sized one, then the first listed.
  std::sort(f.begin(), f.end(), [](const Func& a, const Func& b) {
    return std::tie(a.rel, a.rank, b.sized, a.name) < std::tie(b.rel, b.rank, a.sized, b.name);
  });
  f.erase(
      std::unique(f.begin(), f.end(), [](const Func& a, const Func& b) { return a.rel == b.rel; }),
      f.end());
  // A sizeless label inside a sized function (a loop label in assembly)
  // would steal the rest of that function: drop it, as libdwfl prefers a
  // sized symbol that contains the address.
  uint64_t covered = 0;
  f.erase(std::remove_if(f.begin(), f.end(),
                         [&](const Func& x) {
                           bool inside = !x.sized && x.rel < covered;
                           if (x.sized) covered = std::max(covered, x.end);
                           return inside;
                         }),
          f.end());
  f.shrink_to_fit();
  return t;
}

struct Hit {
  bool found = false;
  uint64_t start = 0;  // absolute address of the symbol in the process
  std::string_view name, module;
};

struct Module {
  bool loaded = false;
  uint64_t bias = 0;
  std::shared_ptr<FuncTable> table;  // null when the ELF file cannot be read
};

struct Proc {
  pid_t pid = 0;
  bool noted = false;       // /proc/PID/maps was read (or tried)
  bool ok = false;          // note_process()'s answer
  bool foreign_ns = false;  // another mount namespace: open files via /proc/PID/root
  std::unique_ptr<Dwfl, decltype(&dwfl_end)> dwfl{nullptr, &dwfl_end};
  std::unordered_map<const Dwfl_Module*, FileKey> files;  // filled by find_elf
  std::unordered_map<const Dwfl_Module*, Module> modules;
  bool perf_map_read = false;
  std::optional<PerfMap> perf_map;
  std::unordered_map<uint64_t, Hit> hits;  // by looked-up address
};

// What an added mapping needs of its file: its functions, and its segments
// to turn a file offset into an ELF address.
struct LoadedFile {
  std::shared_ptr<FuncTable> table;
  Segments segments;
  std::vector<uint8_t> build_id;

  std::optional<uint64_t> vaddr(uint64_t off) const { return segments.vaddr(off); }
};

// A file some process mapped, shared by every process mapping it.
struct FileRef {
  std::optional<FileKey> key;  // what stat() said when added; none for the vDSO
  std::string name;            // the path the process mapped: the module name
  std::string open_path;       // where to read it from
  bool tried = false;
  std::optional<LoadedFile> loaded;  // once tried, if it could be read
};

struct AddedMap {
  uint64_t start = 0, end = 0, pgoff = 0;
  std::shared_ptr<FileRef> file;  // null: resolves nothing (but hides what it covers)
  uint8_t build_id_size = 0;      // the build-id the mapping record gave, if any
  std::array<uint8_t, 20> build_id{};
};

struct AddedMaps {
  std::vector<AddedMap> maps;  // sorted by start, not overlapping
  // Files of mappings replaced since: names from their tables may be held.
  std::vector<std::shared_ptr<FileRef>> retired;
};

// The newest mapping m hides what it overlaps of the older ones.
void insert(AddedMaps& am, AddedMap m) {
  std::vector<AddedMap> out;
  out.reserve(am.maps.size() + 2);
  for (AddedMap& e : am.maps) {
    if (e.end <= m.start || e.start >= m.end) {
      out.push_back(std::move(e));
      continue;
    }
    bool kept = false;
    if (e.start < m.start) {
      AddedMap left = e;
      left.end = m.start;
      out.push_back(std::move(left));
      kept = true;
    }
    if (e.end > m.end) {
      AddedMap right = e;
      right.pgoff += m.end - e.start;
      right.start = m.end;
      out.push_back(std::move(right));
      kept = true;
    }
    if (!kept && e.file &&
        std::find(am.retired.begin(), am.retired.end(), e.file) == am.retired.end())
      am.retired.push_back(std::move(e.file));
  }
  out.push_back(std::move(m));
  std::sort(out.begin(), out.end(),
            [](const AddedMap& a, const AddedMap& b) { return a.start < b.start; });
  am.maps = std::move(out);
}

// Opens the ELF file behind a module. Called by libdwfl with the module's
// userdata, which note() points at the module's Proc. Returns an fd that
// libdwfl owns, or -1.
int find_elf(Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr base, char** file_name,
             Elf** elfp) {
  auto* p = static_cast<Proc*>(*userdata);
  // The vDSO is read from process memory: libdwfl's own callback knows how.
  if (p == nullptr || name[0] != '/')
    return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);

  std::string path;
  if (ends_with(name, kDeletedSuffix)) {
    // The file is gone from every directory; map_files/START-END still opens
    // the mapped inode. The module starts at its first mapping's START.
    std::string dir = "/proc/" + std::to_string(p->pid) + "/map_files";
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%llx-", static_cast<unsigned long long>(base));
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        if (std::strncmp(e->d_name, prefix, std::strlen(prefix)) == 0) {
          path = dir + "/" + e->d_name;
          break;
        }
      }
      closedir(d);
    }
    if (path.empty()) return -1;
  } else if (p->foreign_ns) {
    path = "/proc/" + std::to_string(p->pid) + "/root" + name;
  } else {
    path = name;
  }
  // Device files can be mapped too, and reading one may block forever.
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (fstat(fd, &st) == 0) p->files[mod] = key_of(st);
  *file_name = strdup(name);
  return fd;
}

char* debuginfo_path = nullptr;  // libdwfl's default: .debug dirs, /usr/lib/debug

const Dwfl_Callbacks kCallbacks = {
    .find_elf = find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfo_path,
};

// For the one-file sessions of added mappings: the file is given by fd.
const Dwfl_Callbacks kFileCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

using DwflPtr = std::unique_ptr<Dwfl, decltype(&dwfl_end)>;

// The length of this process's [vDSO] mapping, or 0.
uint64_t own_vdso_len() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    if (!ends_with(line, "[vdso]")) continue;
    unsigned long long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%llx-%llx", &lo, &hi) == 2 && hi > lo) return hi - lo;
  }
  return 0;
}

std::string_view module_name(Dwfl_Module* mod) {
  const char* name =
      dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  // libdwfl names the vDSO "[vdso: PID]"; /proc/PID/maps says "[vdso]".
  if (name == nullptr || name[0] == '[') return "[vdso]";
  return name;  // owned by the Dwfl, which lives as long as the Proc
}

}  // namespace

struct UserSymbols::Impl {
  std::unordered_map<pid_t, std::unique_ptr<Proc>> procs;
  // Shared symbol tables; a table lives as long as some process uses it.
  std::unordered_map<FileKey, std::weak_ptr<FuncTable>, FileKeyHash> tables;
  struct stat own_mnt_ns {};
  bool own_mnt_ns_known = false;
  // Added mappings, by pid; their files, shared, by identity.
  std::unordered_map<pid_t, AddedMaps> added;
  std::unordered_map<FileKey, std::weak_ptr<FileRef>, FileKeyHash> file_refs;
  bool vdso_tried = false;
  uint64_t vdso_len = 0;
  std::shared_ptr<FileRef> vdso;  // this process's vDSO

  Impl() { own_mnt_ns_known = stat("/proc/self/ns/mnt", &own_mnt_ns) == 0; }

  // pid's Proc, made if needed; /proc is read only by noted().
  Proc& proc(pid_t pid) {
    auto [it, fresh] = procs.try_emplace(pid);
    if (fresh) {
      it->second = std::make_unique<Proc>();
      it->second->pid = pid;
    }
    return *it->second;
  }
  Proc& noted(Proc& p) {
    if (!p.noted) {
      p.noted = true;
      note(p, p.pid);
    }
    return p;
  }

  void note(Proc& p, pid_t pid);
  Module& module(Proc& p, Dwfl_Module* mod);
  Hit resolve(Proc& p, uint64_t a);
  void forget(pid_t pid);

  void add(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, std::string_view path,
           const FileIdentity& id);
  std::shared_ptr<FileRef> file_for(pid_t pid, uint64_t start, uint64_t end, std::string_view path,
                                    const FileIdentity& id);
  std::shared_ptr<FileRef> read_now(const std::string& open_path, std::string_view name,
                                    uint64_t ino);
  std::shared_ptr<FileRef> own_vdso(uint64_t len);
  std::optional<LoadedFile> load(const FileRef& f);
  std::optional<LoadedFile> loaded_from(Dwfl_Module* mod, const std::optional<FileKey>& key);
  Hit resolve_added(pid_t pid, uint64_t a);
};

void UserSymbols::Impl::note(Proc& p, pid_t pid) {
  p.pid = pid;
  p.dwfl.reset(dwfl_begin(&kCallbacks));
  if (!p.dwfl) return;
  dwfl_report_begin(p.dwfl.get());
  int rc = dwfl_linux_proc_report(p.dwfl.get(), pid);
  dwfl_report_end(p.dwfl.get(), nullptr, nullptr);
  if (rc != 0) {
    p.dwfl.reset();
    return;
  }
  struct stat ns;
  std::string ns_path = "/proc/" + std::to_string(pid) + "/ns/mnt";
  p.foreign_ns = own_mnt_ns_known && stat(ns_path.c_str(), &ns) == 0 &&
                 (ns.st_dev != own_mnt_ns.st_dev || ns.st_ino != own_mnt_ns.st_ino);

  struct Ctx {
    Proc* p;
    int modules = 0;
  } ctx{&p};
  dwfl_getmodules(
      p.dwfl.get(),
      [](Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr, void* arg) -> int {
        auto* c = static_cast<Ctx*>(arg);
        *userdata = c->p;
        ++c->modules;
        if (name[0] != '/' || c->p->foreign_ns || ends_with(name, kDeletedSuffix)) {
          GElf_Addr bias;
          (void)dwfl_module_getelf(mod, &bias);  // a failure is remembered by libdwfl
        }
        return DWARF_CB_OK;
      },
      &ctx, 0);
  // No file mapped: a kernel thread or a zombie; nothing was captured.
  p.ok = ctx.modules > 0;
}

Module& UserSymbols::Impl::module(Proc& p, Dwfl_Module* mod) {
  Module& m = p.modules[mod];
  if (m.loaded) return m;
  m.loaded = true;
  GElf_Addr bias = 0;
  if (dwfl_module_getelf(mod, &bias) == nullptr) return m;
  m.bias = bias;
  auto file = p.files.find(mod);  // absent for the vDSO: built per process
  if (file != p.files.end()) {
    if (auto shared = tables[file->second].lock()) {
      m.table = std::move(shared);
      return m;
    }
  }
  m.table = FuncTable::build(mod, bias);
  if (file != p.files.end()) tables[file->second] = m.table;
  return m;
}

Hit UserSymbols::Impl::resolve(Proc& p, uint64_t a) {
  if (Hit h = resolve_added(p.pid, a); h.found) return h;
  noted(p);
  if (p.dwfl) {
    Dwfl_Module* mod = dwfl_addrmodule(p.dwfl.get(), a);
    Dwarf_Addr low = 0, high = 0;
    // libdwfl 0.188's dwfl_addrmodule answers the last module for any
    // address above it (the stack, [vsyscall], kernel addresses): check.
    if (mod != nullptr)
      dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
    if (mod != nullptr && a >= low && a < high) {
      Module& m = module(p, mod);
      if (m.table) {
        if (auto f = m.table->find(a - m.bias))
          return Hit{true, m.bias + f->rel_start, f->name, module_name(mod)};
      }
    }
  }
  // JIT code lives in anonymous memory (or in a memfd that is no ELF file).
  if (!p.perf_map_read) {
    p.perf_map_read = true;
    std::string path = "/tmp/perf-" + std::to_string(p.pid) + ".map";
    std::ifstream in(path);
    if (in) {
      p.perf_map = PerfMap::parse(in);
      p.perf_map->set_path(path);
    }
  }
  if (p.perf_map) {
    if (auto r = p.perf_map->lookup(a)) return Hit{true, a - r->offset, r->name, r->module};
  }
  return Hit{};
}

void UserSymbols::Impl::forget(pid_t pid) {
  std::vector<FileKey> used;
  if (auto it = procs.find(pid); it != procs.end()) {
    for (const auto& [mod, key] : it->second->files) used.push_back(key);
    procs.erase(it);
  }
  if (auto it = added.find(pid); it != added.end()) {
    for (const AddedMap& m : it->second.maps)
      if (m.file && m.file->key) used.push_back(*m.file->key);
    for (const auto& f : it->second.retired)
      if (f->key) used.push_back(*f->key);
    added.erase(it);
  }
  for (const FileKey& key : used) {
    auto r = file_refs.find(key);
    if (r != file_refs.end() && r->second.expired()) file_refs.erase(r);
    auto t = tables.find(key);
    if (t != tables.end() && t->second.expired()) tables.erase(t);
  }
}

void UserSymbols::Impl::add(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                            std::string_view path, const FileIdentity& id) {
  AddedMap m;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.file = file_for(pid, start, end, path, id);
  if (!id.build_id.empty() && id.build_id.size() <= m.build_id.size()) {
    m.build_id_size = static_cast<uint8_t>(id.build_id.size());
    std::copy(id.build_id.begin(), id.build_id.end(), m.build_id.begin());
  }
  insert(added[pid], std::move(m));
  // Answers cached before (misses, or the /proc capture's) may be stale now.
  if (auto p = procs.find(pid); p != procs.end()) p->second->hits.clear();
}

std::shared_ptr<FileRef> UserSymbols::Impl::file_for(pid_t pid, uint64_t start, uint64_t end,
                                                     std::string_view path,
                                                     const FileIdentity& id) {
  if (path == "[vdso]") return own_vdso(end - start);
  if (path.empty() || path[0] != '/') return nullptr;  // "//anon", "[heap]", ...
  std::string file(path);
  const std::string proc = "/proc/" + std::to_string(pid);
  // The kernel names the mapped inode by START-END, whatever its path now.
  char range[48];
  std::snprintf(range, sizeof range, "/map_files/%llx-%llx", static_cast<unsigned long long>(start),
                static_cast<unsigned long long>(end));
  if (!ends_with(path, kDeletedSuffix)) {
    struct stat st;
    if (stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
        (id.ino == 0 || st.st_ino == id.ino)) {
      FileKey key = key_of(st);
      auto& slot = file_refs[key];
      if (auto f = slot.lock()) return f;
      auto f = std::make_shared<FileRef>();
      f->key = key;
      f->name = file;
      f->open_path = file;
      slot = f;
      return f;
    }
  }
  // Deleted, replaced, or in another mount namespace: only the live process
  // still reaches the file, so read it now.
  if (auto f = read_now(proc + range, path, id.ino)) return f;
  if (ends_with(path, kDeletedSuffix)) return nullptr;
  return read_now(proc + "/root" + file, path, id.ino);
}

std::shared_ptr<FileRef> UserSymbols::Impl::read_now(const std::string& open_path,
                                                     std::string_view name, uint64_t ino) {
  struct stat st;
  if (stat(open_path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || (ino != 0 && st.st_ino != ino))
    return nullptr;
  FileKey key = key_of(st);
  auto& slot = file_refs[key];
  if (auto f = slot.lock()) {
    // The same inode, added before under another path: read it now if it
    // was waiting, while open_path works.
    if (!f->tried) {
      f->open_path = open_path;
      f->tried = true;
      f->loaded = load(*f);
    }
    return f;
  }
  auto f = std::make_shared<FileRef>();
  f->key = key;
  f->name = std::string(name);
  f->open_path = open_path;
  f->tried = true;
  f->loaded = load(*f);
  slot = f;
  return f;
}

// Every 64-bit process of this kernel maps the same vDSO image, so ours
// stands for theirs; a vDSO of another length (a 32-bit process's) does not.
std::shared_ptr<FileRef> UserSymbols::Impl::own_vdso(uint64_t len) {
  if (!vdso_tried) {
    vdso_tried = true;
    vdso_len = own_vdso_len();
    DwflPtr dwfl(dwfl_begin(&kCallbacks), &dwfl_end);
    if (dwfl && vdso_len != 0) {
      dwfl_report_begin(dwfl.get());
      int rc = dwfl_linux_proc_report(dwfl.get(), getpid());
      dwfl_report_end(dwfl.get(), nullptr, nullptr);
      Dwfl_Module* found = nullptr;
      if (rc == 0)
        dwfl_getmodules(
            dwfl.get(),
            [](Dwfl_Module* mod, void**, const char* name, Dwarf_Addr, void* arg) -> int {
              if (std::strncmp(name, "[vdso", 5) != 0) return DWARF_CB_OK;
              *static_cast<Dwfl_Module**>(arg) = mod;
              return DWARF_CB_ABORT;
            },
            &found, 0);
      if (found != nullptr) {
        auto f = std::make_shared<FileRef>();
        f->name = "[vdso]";
        f->tried = true;
        f->loaded = loaded_from(found, std::nullopt);
        if (f->loaded) vdso = std::move(f);
      }
    }
  }
  return len == vdso_len ? vdso : nullptr;
}

std::optional<LoadedFile> UserSymbols::Impl::load(const FileRef& f) {
  // O_NONBLOCK: a FIFO put at the path since must not hang us.
  int fd = open(f.open_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  struct stat st;
  // Still the file stat() saw when the mapping was added?
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (f.key && !(key_of(st) == *f.key))) {
    close(fd);
    return std::nullopt;
  }
  DwflPtr dwfl(dwfl_begin(&kFileCallbacks), &dwfl_end);
  if (!dwfl) {
    close(fd);
    return std::nullopt;
  }
  dwfl_report_begin(dwfl.get());
  Dwfl_Module* mod = dwfl_report_elf(dwfl.get(), f.name.c_str(), f.open_path.c_str(), fd, 0, false);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (mod == nullptr) {
    close(fd);  // consumed only on success
    return std::nullopt;
  }
  return loaded_from(mod, f.key);
}

std::optional<LoadedFile> UserSymbols::Impl::loaded_from(Dwfl_Module* mod,
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
  if (key) lf.table = tables[*key].lock();
  if (!lf.table) {
    lf.table = FuncTable::build(mod, bias);
    if (key) tables[*key] = lf.table;
  }
  return lf;
}

Hit UserSymbols::Impl::resolve_added(pid_t pid, uint64_t a) {
  auto it = added.find(pid);
  if (it == added.end()) return Hit{};
  const auto& maps = it->second.maps;
  auto m = std::upper_bound(maps.begin(), maps.end(), a,
                            [](uint64_t v, const AddedMap& x) { return v < x.start; });
  if (m == maps.begin()) return Hit{};
  --m;
  if (a >= m->end || !m->file) return Hit{};
  FileRef& f = *m->file;
  if (!f.tried) {
    f.tried = true;
    f.loaded = load(f);
  }
  if (!f.loaded || !f.loaded->table) return Hit{};
  if (m->build_id_size != 0 &&
      !std::equal(m->build_id.begin(), m->build_id.begin() + m->build_id_size,
                  f.loaded->build_id.begin(), f.loaded->build_id.end()))
    return Hit{};
  auto vaddr = f.loaded->vaddr(a - m->start + m->pgoff);
  if (!vaddr) return Hit{};
  auto found = f.loaded->table->find(*vaddr);
  if (!found) return Hit{};
  return Hit{true, a - (*vaddr - found->rel_start), found->name, f.name};
}

UserSymbols::UserSymbols() : impl_(std::make_unique<Impl>()) {}
UserSymbols::~UserSymbols() = default;

bool UserSymbols::note_process(pid_t pid) { return impl_->noted(impl_->proc(pid)).ok; }

std::optional<Resolved> UserSymbols::lookup(pid_t pid, uint64_t addr, bool return_address) {
  if (return_address && addr == 0) return std::nullopt;
  // See KernelSymbols::lookup: the call may be a function's last instruction.
  uint64_t a = return_address ? addr - 1 : addr;
  Proc& p = impl_->proc(pid);
  auto [it, fresh] = p.hits.try_emplace(a);
  if (fresh) it->second = impl_->resolve(p, a);
  const Hit& h = it->second;
  if (!h.found) return std::nullopt;
  return Resolved{h.name, addr - h.start, h.module};
}

void UserSymbols::forget(pid_t pid) { impl_->forget(pid); }

void UserSymbols::add_mapping(pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                              std::string_view path, const FileIdentity& id) {
  if (len == 0 || start + len < start) return;
  impl_->add(pid, start, start + len, pgoff, path, id);
}

}  // namespace tracekit::symbols
