// How this works: UserSymbols ties together three sources of a process's
// symbols, asked in the order user.hpp gives:
//  - its added mappings (MappingSet, in mapping_set.hpp), whose files
//    (MappedFiles) are shared by every process mapping them;
//  - its /proc/PID/maps capture (ProcCapture), a libdwfl session per
//    process;
//  - /tmp/perf-PID.map (PerfMap), for addresses in no ELF file (JIT code),
//    read on the first such miss: by report time the JIT has written more
//    of it than at note time.
// Both ELF sources resolve through function tables (FunctionTables) shared
// by file identity, so a file's table is built once, whichever way the
// file was reached.
//
// Results are cached per (process, looked-up address). A process holds the
// tables it used, and names are views into them (or into its PerfMap), so
// they live until forget(pid).
#include "symbols/user.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbols/file_key.hpp"
#include "symbols/function_table.hpp"
#include "symbols/mapped_files.hpp"
#include "symbols/mapping_set.hpp"
#include "symbols/perf_map.hpp"
#include "symbols/proc_capture.hpp"
#include "symbols/unwind_session.hpp"

namespace tracekit::symbols {

namespace {

struct Proc {
  pid_t pid = 0;
  bool noted = false;  // /proc/PID/maps was read (or tried)
  bool ok = false;     // note_process()'s answer
  ProcCapture capture;
  bool perf_map_read = false;
  std::optional<PerfMap> perf_map;
  // By looked-up address; offsets count from that address.
  std::unordered_map<uint64_t, std::optional<Resolved>> hits;
};

}  // namespace

struct UserSymbols::Impl {
  std::unordered_map<pid_t, std::unique_ptr<Proc>> procs;
  // Shared symbol tables; a table lives as long as some process uses it.
  FunctionTables tables;
  struct stat own_mnt_ns {};
  bool own_mnt_ns_known = false;
  // Added mappings, by pid; their files, shared, by identity.
  std::unordered_map<pid_t, MappingSet> added;
  MappedFiles files{tables};
  // Unwinding sessions, by pid (unwind()).
  std::unordered_map<pid_t, std::unique_ptr<UnwindSession>> unwinders;

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
      p.ok = p.capture.capture(p.pid, own_mnt_ns_known ? &own_mnt_ns : nullptr);
    }
    return p;
  }

  std::optional<Resolved> resolve(Proc& p, uint64_t a);
  void forget(pid_t pid);
  void add(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, std::string_view path,
           const FileIdentity& id);
};

std::optional<Resolved> UserSymbols::Impl::resolve(Proc& p, uint64_t a) {
  if (auto it = added.find(p.pid); it != added.end()) {
    if (auto r = it->second.lookup(a, files)) return r;
  }
  noted(p);
  if (auto r = p.capture.lookup(a, tables)) return r;
  // JIT code lives in anonymous memory (or in a memfd that is no ELF file).
  if (!p.perf_map_read) {
    p.perf_map_read = true;
    // The map is the process owner's to write (a process gone: ours only).
    const std::string pid = std::to_string(p.pid);
    struct stat proc {};
    uid_t owner = stat(("/proc/" + pid).c_str(), &proc) == 0 ? proc.st_uid : geteuid();
    p.perf_map = PerfMap::load("/tmp/perf-" + pid + ".map", owner);
  }
  if (p.perf_map) return p.perf_map->lookup(a);
  return std::nullopt;
}

void UserSymbols::Impl::forget(pid_t pid) {
  std::vector<FileKey> used;
  if (auto it = procs.find(pid); it != procs.end()) {
    it->second->capture.files(used);
    procs.erase(it);
  }
  if (auto it = added.find(pid); it != added.end()) {
    it->second.files(used);
    added.erase(it);
  }
  unwinders.erase(pid);
  for (const FileKey& key : used) {
    files.drop_unused(key);
    tables.drop_unused(key);
  }
}

void UserSymbols::Impl::add(pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff,
                            std::string_view path, const FileIdentity& id) {
  Mapping m;
  m.start = start;
  m.end = end;
  m.pgoff = pgoff;
  m.file = files.find(pid, start, end, path, id.ino);
  if (!id.build_id.empty() && id.build_id.size() <= m.build_id.size()) {
    m.build_id_size = static_cast<uint8_t>(id.build_id.size());
    std::copy(id.build_id.begin(), id.build_id.end(), m.build_id.begin());
  }
  added[pid].add(std::move(m));
  // Answers cached before (misses, or the /proc capture's) may be stale now.
  if (auto p = procs.find(pid); p != procs.end()) p->second->hits.clear();
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
  const std::optional<Resolved>& h = it->second;
  if (!h) return std::nullopt;
  return Resolved{h->name, h->offset + (addr - a), h->module};
}

std::optional<FileMapping> UserSymbols::mapping(pid_t pid, uint64_t addr) {
  if (auto it = impl_->added.find(pid); it != impl_->added.end()) {
    if (auto m = it->second.mapping(addr, impl_->files)) return m;
  }
  return impl_->noted(impl_->proc(pid)).capture.mapping(addr, impl_->tables);
}

bool UserSymbols::in_file(pid_t pid, uint64_t addr) {
  if (auto it = impl_->added.find(pid); it != impl_->added.end() && it->second.holds(addr))
    return true;
  return impl_->noted(impl_->proc(pid)).capture.holds(addr);
}

void UserSymbols::forget(pid_t pid) { impl_->forget(pid); }

Unwound UserSymbols::unwind(pid_t pid, std::span<const uint64_t> regs, uint64_t mask,
                            std::span<const uint8_t> stack, bool stack_whole, size_t max_frames,
                            std::vector<uint64_t>& out) {
  auto r = dwarf_regs(regs, mask);
  if (!r) return {};
  auto& session = impl_->unwinders[pid];
  if (!session)
    session = std::make_unique<UnwindSession>(
        pid, [this, pid](uint64_t addr) { return mapping(pid, addr); });
  return session->unwind(*r, StackCopy{(*r)[7], stack}, stack_whole, max_frames, out);
}

void UserSymbols::add_mapping(pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
                              std::string_view path, const FileIdentity& id) {
  if (len == 0 || start + len < start) return;
  impl_->add(pid, start, start + len, pgoff, path, id);
}

}  // namespace tracekit::symbols
