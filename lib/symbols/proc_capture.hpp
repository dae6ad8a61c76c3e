// A process's mappings as /proc/PID/maps shows them, captured once in a
// libdwfl session (report_process) so that its addresses still resolve
// after it exits. Files are opened at the first lookup that lands in them,
// except what only the live process can give, which capture() reads at
// once: the vDSO, deleted files, and every file of a process in another
// mount namespace. Internal to lib/symbols.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbols/dwfl_session.hpp"
#include "symbols/file_key.hpp"
#include "symbols/function_table.hpp"
#include "symbols/segments.hpp"
#include "symbols/symbol.hpp"

namespace tracekit::symbols {

class ProcCapture {
 public:
  ProcCapture() = default;
  // The session's modules point at files_.
  ProcCapture(const ProcCapture&) = delete;
  ProcCapture& operator=(const ProcCapture&) = delete;

  // Captures pid's mappings (call once). own_mnt_ns: what stat() says of
  // /proc/self/ns/mnt, null if unknown. False when nothing was captured:
  // the process is gone or unreadable, or maps no file (a kernel thread, a
  // zombie).
  bool capture(pid_t pid, const struct stat* own_mnt_ns);

  // The function holding addr, its offset counted from addr; nullopt when
  // no captured file holds it or no function there is known. Tables come
  // from (and go to) tables. Names live as long as this capture.
  std::optional<Resolved> lookup(uint64_t addr, FunctionTables& tables);

  // The mapping that holds addr (see UserSymbols::mapping): the PT_LOAD
  // segment of its module's file holding it, page-aligned; the whole module
  // from offset 0 when the file cannot be read. Reads the file if needed.
  std::optional<FileMapping> mapping(uint64_t addr, FunctionTables& tables);
  // Whether mapping() has an answer for addr, without opening its file.
  bool holds(uint64_t addr) const;

  // Appends the files opened so far, whose tables may be shared.
  void files(std::vector<FileKey>& out) const;

 private:
  struct Module {
    bool loaded = false;
    bool read = false;  // its ELF file could be read
    uint64_t bias = 0;
    std::shared_ptr<FunctionTable> table;  // null when the ELF file cannot be read
    Segments segments;
    std::string build_id;  // hex
  };
  // mod's entry, its ELF file read at the first call.
  Module& module(Dwfl_Module* mod, FunctionTables& tables);

  ProcessFiles files_;  // every module's userdata
  DwflPtr dwfl_{nullptr, &dwfl_end};
  std::unordered_map<const Dwfl_Module*, Module> modules_;
};

}  // namespace tracekit::symbols
