// How this works: each process gets its own libdwfl session (a Dwfl). At
// capture time dwfl_linux_proc_report() reads /proc/PID/auxv and
// /proc/PID/maps and records one module per mapped file, by path and address
// range; no ELF file is opened yet. ELF files are opened lazily, by the
// session's find_elf callback, on the first lookup that lands in a module,
// which is at report time, usually after the process has exited. That is
// fine for a file that still exists at its path, so the common case stays
// lazy: measured here, the report costs ~40-60 us per process, and opening
// every module's ELF at capture time would add ~100 us more (17 modules for
// /usr/bin/sleep, most of them locale files no stack ever points into).
// What cannot wait is what only the live process can give, so capture()
// loads these at once:
//  - the vDSO, which exists only in the process's memory (/proc/PID/mem);
//  - mappings of deleted files ("... (deleted)"), reachable only through
//    /proc/PID/map_files (root only);
//  - every file of a process in another mount namespace (a container, a
//    systemd service with a private /tmp): its paths mean something only
//    below /proc/PID/root, which vanishes with the process.
#include "symbols/proc_capture.hpp"

#include <unistd.h>

#include <span>
#include <string>

#include "symbols/build_id.hpp"

namespace tracekit::symbols {

bool ProcCapture::capture(pid_t pid, const struct stat* own_mnt_ns) {
  files_.pid = pid;
  dwfl_ = report_process(pid);
  if (!dwfl_) return false;
  struct stat ns;
  std::string ns_path = "/proc/" + std::to_string(pid) + "/ns/mnt";
  files_.foreign_ns = own_mnt_ns != nullptr && stat(ns_path.c_str(), &ns) == 0 &&
                      (ns.st_dev != own_mnt_ns->st_dev || ns.st_ino != own_mnt_ns->st_ino);

  struct Ctx {
    ProcessFiles* files;
    int modules = 0;
  } ctx{&files_};
  dwfl_getmodules(
      dwfl_.get(),
      [](Dwfl_Module* mod, void** userdata, const char* name, Dwarf_Addr, void* arg) -> int {
        auto* c = static_cast<Ctx*>(arg);
        *userdata = c->files;
        ++c->modules;
        if (name[0] != '/' || c->files->foreign_ns || is_deleted(name)) {
          GElf_Addr bias;
          (void)dwfl_module_getelf(mod, &bias);  // a failure is remembered by libdwfl
        }
        return DWARF_CB_OK;
      },
      &ctx, 0);
  // No file mapped: a kernel thread or a zombie; nothing was captured.
  return ctx.modules > 0;
}

ProcCapture::Module& ProcCapture::module(Dwfl_Module* mod, FunctionTables& tables) {
  Module& m = modules_[mod];
  if (m.loaded) return m;
  m.loaded = true;
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  if (elf == nullptr) return m;
  m.read = true;
  m.bias = bias;
  auto file = files_.opened.find(mod);  // absent for the vDSO: built per process
  m.table = tables.of(mod, bias,
                      file != files_.opened.end() ? std::optional(file->second) : std::nullopt);
  m.segments = Segments::of(elf);
  const unsigned char* bits = nullptr;
  GElf_Addr note_vaddr;
  int len = dwfl_module_build_id(mod, &bits, &note_vaddr);
  if (len > 0) m.build_id = hex_string(std::span(bits, static_cast<size_t>(len)));
  return m;
}

std::optional<FileMapping> ProcCapture::mapping(uint64_t addr, FunctionTables& tables) {
  if (!dwfl_) return std::nullopt;
  Dwfl_Module* mod = module_at(dwfl_.get(), addr);
  if (mod == nullptr) return std::nullopt;
  const Module& m = module(mod, tables);
  FileMapping out;
  out.path = module_name(mod);
  out.build_id = m.build_id;
  auto seg = m.read ? m.segments.holding(addr - m.bias) : std::nullopt;
  if (seg) {
    // ld.so maps each segment from the page holding its first byte, and
    // vaddr and offset agree modulo the page size.
    uint64_t page = static_cast<uint64_t>(getpagesize());
    uint64_t lead = seg->offset % page;
    out.start = m.bias + seg->vaddr - lead;
    out.end = (m.bias + seg->vaddr + seg->filesz + page - 1) / page * page;
    out.offset = seg->offset - lead;
  } else {
    Dwarf_Addr low = 0, high = 0;
    dwfl_module_info(mod, nullptr, &low, &high, nullptr, nullptr, nullptr, nullptr);
    out.start = low;
    out.end = high;
  }
  return out;
}

bool ProcCapture::holds(uint64_t addr) const {
  return dwfl_ && module_at(dwfl_.get(), addr) != nullptr;
}

std::optional<Resolved> ProcCapture::lookup(uint64_t addr, FunctionTables& tables) {
  if (!dwfl_) return std::nullopt;
  Dwfl_Module* mod = module_at(dwfl_.get(), addr);
  if (mod == nullptr) return std::nullopt;
  const Module& m = module(mod, tables);
  if (!m.table) return std::nullopt;
  auto f = m.table->find(addr - m.bias);
  if (!f) return std::nullopt;
  return Resolved{f->name, addr - (m.bias + f->rel_start), module_name(mod)};
}

void ProcCapture::files(std::vector<FileKey>& out) const {
  for (const auto& [mod, key] : files_.opened) out.push_back(key);
}

}  // namespace tracekit::symbols
