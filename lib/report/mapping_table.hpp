// Which file (or kernel image) each frame's address lies in, for the
// report's mappings (Report::mappings, Frame::mapping): pprof keeps
// them so that it can tell binaries apart and symbolize again from them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "report/report.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/user.hpp"

namespace tracekit::report {

// Collects the mappings that a report's frames lie in, each once. Indices
// are stable: one mapping of one file in one process is one entry, however
// many frames lie in it; the same file mapped by two processes is two
// entries (their addresses differ), as pprof expects. Either symbolizer may
// be null: its addresses then have no mapping.
class MappingTable {
 public:
  MappingTable(const symbols::KernelSymbols* k, symbols::UserSymbols* u) : kernel_(k), user_(u) {}

  // The index of the mapping holding user address addr of process pid
  // (from UserSymbols::mapping: added mappings or /proc/PID/maps, build-id
  // from the mapping record or the file); -1 when no file is known there
  // (anonymous memory, JIT code, a process that could not be read).
  int32_t user(uint32_t pid, uint64_t addr);

  // The index of the kernel image holding addr: "[kernel.kallsyms]" (the
  // range of vmlinux' text, its build-id from /sys/kernel/notes) or
  // "[MODULE]" (its symbols' range, build-id from /sys/module); -1 when
  // kallsyms places addr in neither.
  int32_t kernel(uint64_t addr);

  // The mappings, by index; the table is empty afterwards.
  std::vector<Mapping> take();

 private:
  struct Known {
    uint64_t start, end;
    int32_t index;
  };

  const symbols::KernelSymbols* kernel_;
  symbols::UserSymbols* user_;
  std::vector<Mapping> mappings_;
  // By (pid, start, end, offset, path): the identity of a user mapping.
  std::map<std::tuple<uint32_t, uint64_t, uint64_t, uint64_t, std::string>, int32_t> by_key_;
  // Ranges already found, by pid, sorted by start: most addresses need no lookup.
  std::unordered_map<uint32_t, std::vector<Known>> known_;
  std::map<std::string, int32_t> by_module_;  // kernel: "" is vmlinux
};

}  // namespace tracekit::report
