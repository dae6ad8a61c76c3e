#include "symbols/dwfl_session.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace tracekit::symbols {

namespace {

// Opens the ELF file behind a module. Called by libdwfl with the module's
// userdata, a ProcessFiles or null. Returns an fd that libdwfl owns, or -1.
int find_elf(Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr base, char** file_name,
             Elf** elfp) {
  auto* p = static_cast<ProcessFiles*>(*userdata);
  // The vDSO is read from process memory: libdwfl's own callback knows how.
  if (p == nullptr || name[0] != '/')
    return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);

  std::string path;
  if (is_deleted(name)) {
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
  // O_NONBLOCK and the fstat: a FIFO put at the path since must not hang us.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return -1;
  }
  p->opened[mod] = key_of(st);
  *file_name = strdup(name);
  return fd;
}

char* debuginfo_path = nullptr;  // libdwfl's default: .debug dirs, /usr/lib/debug

const Dwfl_Callbacks kProcessCallbacks = {
    .find_elf = find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &debuginfo_path,
};

// For one-file sessions: the file is given by fd.
const Dwfl_Callbacks kFileCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &debuginfo_path,
};

}  // namespace

DwflPtr report_process(pid_t pid) {
  DwflPtr dwfl(dwfl_begin(&kProcessCallbacks), &dwfl_end);
  if (!dwfl) return dwfl;
  dwfl_report_begin(dwfl.get());
  int rc = dwfl_linux_proc_report(dwfl.get(), pid);
  dwfl_report_end(dwfl.get(), nullptr, nullptr);
  if (rc != 0) dwfl.reset();
  return dwfl;
}

FileSession report_file(const std::string& name, const std::string& path, int fd) {
  FileSession s;
  s.dwfl = files_session();
  if (!s.dwfl) {
    close(fd);
    return s;
  }
  dwfl_report_begin(s.dwfl.get());
  s.module = dwfl_report_elf(s.dwfl.get(), name.c_str(), path.c_str(), fd, 0, false);
  dwfl_report_end(s.dwfl.get(), nullptr, nullptr);
  if (s.module == nullptr) close(fd);  // consumed only on success
  return s;
}

DwflPtr files_session() { return DwflPtr(dwfl_begin(&kFileCallbacks), &dwfl_end); }

Dwfl_Module* module_at(Dwfl* dwfl, uint64_t addr) {
  Dwfl_Module* mod = dwfl_addrmodule(dwfl, addr);
  if (mod == nullptr) return nullptr;
  // libdwfl 0.188's dwfl_addrmodule answers the last module for any
  // address above it (the stack, [vsyscall], kernel addresses): check.
  Dwarf_Addr low = 0, high = 0;
  dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
  return addr >= low && addr < high ? mod : nullptr;
}

std::string_view module_name(Dwfl_Module* mod) {
  const char* name =
      dwfl_module_info(mod, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  // libdwfl names the vDSO "[vdso: PID]"; /proc/PID/maps says "[vdso]".
  if (name == nullptr || name[0] == '[') return "[vdso]";
  return name;  // owned by the Dwfl
}

}  // namespace tracekit::symbols
