// User-space symbols with elfutils libdwfl, cached per process.
//
// note_process() captures a process's mappings (/proc/PID/maps) the first
// time the process is seen, so that it still resolves after it exits; lookups
// happen later, at report time, once per unique frame. Each file-backed
// mapping resolves through .symtab, else .dynsym, with separate debuginfo
// found by build-id or .gnu_debuglink (libdwfl's standard callbacks).
// Addresses in anonymous executable memory resolve through
// /tmp/perf-PID.map when a JIT wrote one (read at the first such lookup).
// A file's symbol table is built once and shared by every process mapping
// it. Not thread-safe.
//
// Mappings can also be learned from the kernel (add_mapping(), fed from
// PERF_RECORD_MMAP2 by perf::ProcessEvents): that is what resolves a process
// that lived and died between two drains of a ring, whose /proc/PID was gone
// before note_process() could read it. For an address of pid, lookup() asks
// in this order, the first answer wins:
//  1. the mappings added for pid (the newest one where several overlap);
//  2. the /proc/PID/maps capture (note_process(), or made by the first
//     lookup that gets here), which also knows the vDSO, deleted files and
//     other mount namespaces of a process that was alive at capture time;
//  3. /tmp/perf-PID.map.
// An added mapping whose file cannot be read or is not the file that was
// mapped (see add_mapping) answers nothing and the next source is asked.
// forget(pid) drops all three, so after an exec the new image's mappings
// (added after the forget) replace the old ones.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "symbols/symbol.hpp"
#include "symbols/unwind.hpp"

namespace tracekit::symbols {

// How a PERF_RECORD_MMAP2 identifies a mapped file (UserSymbols::add_mapping).
// A field left empty is not checked.
struct FileIdentity {
  uint64_t ino = 0;                   // inode number; 0 = unknown
  std::span<const uint8_t> build_id;  // (attr.build_id); empty = unknown
};

class UserSymbols {
 public:
  UserSymbols();
  ~UserSymbols();
  UserSymbols(const UserSymbols&) = delete;
  UserSymbols& operator=(const UserSymbols&) = delete;

  // Captures pid's mappings the first time it is called for pid (pid is a
  // tgid); later calls are cheap and return the first answer. Returns false
  // when the process could not be read (already gone, no permission).
  bool note_process(pid_t pid);

  // The function containing addr in pid. Notes the process first if needed
  // and if pid's added mappings do not resolve addr.
  // return_address: look up addr-1 (offset still from addr). nullopt when
  // nothing resolves.
  std::optional<Resolved> lookup(pid_t pid, uint64_t addr, bool return_address = false);

  // The mapping of a file that holds addr in pid, from the source lookup()
  // would resolve addr through (added mappings, else the /proc capture;
  // JIT code has none): its range and offset as the kernel mapped it (for
  // the capture: the PT_LOAD segment holding addr, page-aligned, as ld.so
  // maps it), its path, and its build-id (the mapping record's, else the
  // file's own, reading the file if it was not yet). nullopt when no file
  // is known there. path lives as long as lookup()'s names.
  std::optional<FileMapping> mapping(pid_t pid, uint64_t addr);
  // Whether mapping(pid, addr) has an answer: a search, no strings built
  // and no file opened (for a test made on every sample).
  bool in_file(pid_t pid, uint64_t addr);

  // Records that pid mapped [start, start + len) of the file at path from
  // file offset pgoff (an executable mapping, as PERF_RECORD_MMAP2 tells
  // it). Later lookups of pid resolve addresses in it, address -> file
  // offset -> ELF address (through the file's PT_LOAD segments) -> symbol,
  // whether or not the process still exists. A newer mapping replaces the
  // part of an older one it overlaps (MAP_FIXED, dlclose + dlopen).
  //
  // The path is checked now: stat() must find a regular file, with the
  // inode id.ino when given. When that fails (the file was deleted or
  // replaced since, or the process lives in another mount namespace) and
  // the process still lives, the file is read at once through
  // /proc/PID/map_files/START-END (root only), else /proc/PID/root/PATH. A
  // mapping whose file cannot be found so, or whose path is no file
  // ("//anon", "[heap]"), resolves nothing but still hides the older added
  // mappings it overlaps. "[vdso]" resolves through this process's own vDSO,
  // the same kernel's image, when the lengths agree (not a 32-bit
  // process's). The ELF file itself is read at the first lookup that lands
  // in it, and must then still be the file stat() saw; a build-id in id is
  // checked then. Never fails; costs a stat() per call, and about 64 bytes
  // per mapping until forget(pid).
  void add_mapping(pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff, std::string_view path,
                   const FileIdentity& id = {});

  // Unwinds a sample of pid with DWARF CFI (--call-graph dwarf, see
  // unwind.hpp): regs are the sample's user registers of mask
  // (PERF_SAMPLE_REGS_USER), stack its copy of the user stack from the
  // sampled sp up, stack_whole whether the copy is all the sample asked for
  // (not cut short by the stack's top). Appends the frames, the sampled ip
  // first then return addresses (as a perf callchain's user side; a signal
  // frame and the frame it interrupted carry kActivationFrame), at most
  // max_frames of them plus an unknown frame (0) where the unwinder
  // stopped, to out. Modules come from the mappings lookup() uses (one
  // libdwfl session per process, until forget(pid)). Registers that lack
  // one the unwinder needs: nothing appended.
  Unwound unwind(pid_t pid, std::span<const uint64_t> regs, uint64_t mask,
                 std::span<const uint8_t> stack, bool stack_whole, size_t max_frames,
                 std::vector<uint64_t>& out);

  // Forgets pid: its /proc capture, its added mappings, its unwinding
  // session and its cached lookups (its process exec'ed, or exited and the pid may be reused).
  // Names returned for pid are invalid afterwards.
  void forget(pid_t pid);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::symbols
