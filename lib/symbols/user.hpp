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
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>

#include "symbols/symbol.hpp"

namespace tracekit::symbols {

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

  // The function containing addr in pid. Notes the process first if needed.
  // return_address: look up addr-1 (offset still from addr). nullopt when
  // nothing resolves.
  std::optional<Resolved> lookup(pid_t pid, uint64_t addr, bool return_address = false);

  // Forgets pid (its process exited and the pid may be reused).
  void forget(pid_t pid);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::symbols
