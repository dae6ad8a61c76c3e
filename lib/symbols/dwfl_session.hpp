// The libdwfl glue: sessions (a Dwfl) over a live process's modules or over
// one ELF file, with the callbacks that open their files. A process's files
// are opened lazily, the first time a module's ELF is asked for, from its
// path, from /proc/PID/map_files (deleted files) or below /proc/PID/root
// (another mount namespace); separate debuginfo is found by build-id or
// .gnu_debuglink (libdwfl's standard callbacks). Internal to lib/symbols.
#pragma once

#include <elfutils/libdwfl.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "symbols/file_key.hpp"

namespace tracekit::symbols {

using DwflPtr = std::unique_ptr<Dwfl, decltype(&dwfl_end)>;

// Whether a path from /proc/PID/maps is of a file deleted since it was
// mapped ("/lib/x.so (deleted)"): only /proc/PID/map_files reaches it.
inline bool is_deleted(std::string_view path) { return path.ends_with(" (deleted)"); }

// Where a process's files are opened from, for a session of report_process:
// a module whose userdata points at one is opened through it; any other
// (its userdata left null, or the vDSO) the way libdwfl does
// (dwfl_linux_proc_find_elf).
struct ProcessFiles {
  pid_t pid = 0;
  bool foreign_ns = false;  // another mount namespace: open files via /proc/PID/root
  std::unordered_map<const Dwfl_Module*, FileKey> opened;  // what each module's file was
};

// A session of pid's modules, one per mapped file, by path and address
// range, as /proc/PID/auxv and /proc/PID/maps tell them; no file is opened
// yet. Null when they cannot be read.
DwflPtr report_process(pid_t pid);

// A session of the one ELF file named name, read from path, open as fd.
struct FileSession {
  DwflPtr dwfl{nullptr, &dwfl_end};
  Dwfl_Module* module = nullptr;  // null: fd is no ELF file libdwfl reads
};
// Takes fd: the session owns it, or it is closed when there is no module.
FileSession report_file(const std::string& name, const std::string& path, int fd);

// An empty session for modules reported from files (dwfl_report_elf), as
// report_file's; null when libdwfl cannot make one.
DwflPtr files_session();

// The module of dwfl whose address range holds addr, or null.
Dwfl_Module* module_at(Dwfl* dwfl, uint64_t addr);

// A module's name as /proc/PID/maps says it: the file's path, or "[vdso]".
// Owned by the module's Dwfl.
std::string_view module_name(Dwfl_Module* mod);

}  // namespace tracekit::symbols
