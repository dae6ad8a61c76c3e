// How this works: each process gets its own libdwfl session (a Dwfl) with
// libdwfl's thread-state callbacks attached once (dwfl_attach_state); each
// unwind points the callbacks at the sample being unwound. The session
// starts empty. A module is reported (dwfl_report_elf at the load bias its
// mapping implies) the first time a frame's pc lands in a mapping of a file
// the symbolizer knows (UserSymbols::mapping: the MMAP2 records, else the
// /proc/PID/maps capture): libdw unwinds frame N+1 with the CFI of frame
// N's module, which the frame callback has reported by then, so a process
// opens only the files its stacks go through.
//
// Memory reads hit the sampled stack copy, else the bytes a mapped file
// holds at that address (CFI expressions may read a GOT); nothing else of
// the process is known. A read above the copy's end is the stack the sample
// did not take: the unwind is cut there.
//
// Never loops: at most max_frames frames, and a frame whose (pc, sp) was
// seen before ends the unwind.
#include "symbols/unwind.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "symbols/mapped_files.hpp"
#include "symbols/segments.hpp"
#include "symbols/unwind_session.hpp"

namespace tracekit::symbols {

std::optional<uint64_t> perf_reg(std::span<const uint64_t> regs, uint64_t mask, unsigned reg) {
  if (reg >= 64 || !(mask & (uint64_t{1} << reg))) return std::nullopt;
  // Registers come lowest bit first: reg's index is the bits of mask below it.
  auto i = static_cast<size_t>(std::popcount(mask & ((uint64_t{1} << reg) - 1)));
  if (i >= regs.size()) return std::nullopt;
  return regs[i];
}

std::optional<DwarfRegs> dwarf_regs(std::span<const uint64_t> regs, uint64_t mask) {
  // DWARF order: rax rdx rcx rbx rsi rdi rbp rsp r8..r15 rip.
  static constexpr unsigned kFromPerf[kDwarfRegs] = {
      kPerfAx,     kPerfDx,     kPerfCx,     kPerfBx,     kPerfSi,     kPerfDi,
      kPerfBp,     kPerfSp,     kPerfR8,     kPerfR8 + 1, kPerfR8 + 2, kPerfR8 + 3,
      kPerfR8 + 4, kPerfR8 + 5, kPerfR8 + 6, kPerfR8 + 7, kPerfIp};
  DwarfRegs out{};
  for (size_t i = 0; i < kDwarfRegs; ++i) {
    auto v = perf_reg(regs, mask, kFromPerf[i]);
    if (!v) return std::nullopt;
    out[i] = *v;
  }
  return out;
}

std::optional<uint64_t> StackCopy::read(uint64_t addr) const {
  if (addr < sp || addr - sp > bytes.size() || bytes.size() - (addr - sp) < 8) return std::nullopt;
  uint64_t v;
  std::memcpy(&v, bytes.data() + (addr - sp), sizeof v);
  return v;
}

namespace {

constexpr unsigned kDwarfSp = 7;

// This process's vDSO as a file (a memfd): every 64-bit process of this
// kernel maps the same image. -1 when there is none. Never closed.
int vdso_fd() {
  static const int fd = [] {
    auto base = getauxval(AT_SYSINFO_EHDR);
    if (base == 0) return -1;
    Elf64_Ehdr eh;
    std::memcpy(&eh, reinterpret_cast<const void*>(base), sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return -1;
    // The image ends with its section headers.
    uint64_t size = eh.e_shoff + uint64_t{eh.e_shnum} * eh.e_shentsize;
    int f = memfd_create("tracekit-vdso", MFD_CLOEXEC);
    if (f < 0) return -1;
    if (write(f, reinterpret_cast<const void*>(base), size) != static_cast<ssize_t>(size)) {
      close(f);
      return -1;
    }
    return f;
  }();
  return fd;
}

// Opens the file of mapping m of pid, as the symbolizer reaches it: its
// path, else (deleted, or in another mount namespace) through the live
// process. -1 when it cannot be opened.
int open_mapped(pid_t pid, const FileMapping& m) {
  if (m.path == "[vdso]") {
    int fd = vdso_fd();
    return fd < 0 ? -1 : fcntl(fd, F_DUPFD_CLOEXEC, 0);
  }
  for (const MappedPath& p : mapped_paths(pid, m.start, m.end, m.path)) {
    struct stat st;
    // Device files can be mapped too, and reading one may block forever.
    if (stat(p.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    int fd = open(p.path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd >= 0) return fd;
  }
  return -1;
}

// The load bias of the ELF file open as fd, mapped as m: addr (in m) less
// the ELF address its file offset loads at. nullopt when fd is no ELF file
// or addr is in none of its segments.
std::optional<uint64_t> load_bias(int fd, const FileMapping& m, uint64_t addr) {
  Elf* elf = elf_begin(fd, ELF_C_READ_MMAP, nullptr);
  if (elf == nullptr) return std::nullopt;
  auto vaddr = Segments::of(elf).vaddr(m.offset + (addr - m.start));
  elf_end(elf);
  if (!vaddr) return std::nullopt;
  return addr - *vaddr;
}

pid_t next_thread(Dwfl* dwfl, void* arg, void** thread_argp) {
  if (*thread_argp != nullptr) return 0;
  *thread_argp = arg;
  return dwfl_pid(dwfl);
}

bool get_thread(Dwfl*, pid_t, void* arg, void** thread_argp) {
  *thread_argp = arg;
  return true;
}

bool memory_read(Dwfl*, Dwarf_Addr addr, Dwarf_Word* result, void* arg) {
  uint64_t v;
  if (!static_cast<UnwindSession*>(arg)->read_memory(addr, v)) {
    return false;
  }
  *result = v;
  return true;
}

bool set_initial_registers(Dwfl_Thread* thread, void* arg) {
  return static_cast<const UnwindSession*>(arg)->set_registers(thread);
}

const Dwfl_Thread_Callbacks kThreadCallbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
    .detach = nullptr,
    .thread_detach = nullptr,
};

// No separate debuginfo: libdwfl would look for .debug_frame there first,
// and reading a debug file (libc6-dbg's) inflates its compressed DWARF, in
// each process's session. The CFI every x86_64 file carries is .eh_frame.
int no_debuginfo(Dwfl_Module*, void**, const char*, Dwarf_Addr, const char*, const char*,
                 GElf_Word, char**) {
  return -1;
}

const Dwfl_Callbacks kUnwindCallbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = no_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = nullptr,
};

int frame_callback(Dwfl_Frame* state, void* arg) {
  return static_cast<UnwindSession*>(arg)->frame(state);
}

}  // namespace

UnwindSession::UnwindSession(pid_t pid, std::function<std::optional<FileMapping>(uint64_t)> mapping)
    : pid_(pid), mapping_(std::move(mapping)), dwfl_(dwfl_begin(&kUnwindCallbacks), &dwfl_end) {}

Dwfl_Module* UnwindSession::module(uint64_t addr) {
  if (!dwfl_) return nullptr;
  if (Dwfl_Module* mod = module_at(dwfl_.get(), addr)) return mod;
  for (auto [lo, hi] : failed_)
    if (addr >= lo && addr < hi) return nullptr;
  auto m = mapping_(addr);
  if (!m) return nullptr;
  Dwfl_Module* mod = nullptr;
  int fd = open_mapped(pid_, *m);
  auto bias = fd >= 0 ? load_bias(fd, *m, addr) : std::nullopt;
  if (bias) {
    const std::string name(m->path), path = name.starts_with("/") ? name : std::string();
    dwfl_report_begin_add(dwfl_.get());
    // add_p_vaddr: the module loads at bias + its p_vaddrs (ET_EXEC: at them).
    mod = dwfl_report_elf(dwfl_.get(), name.c_str(), path.empty() ? name.c_str() : path.c_str(), fd,
                          *bias, true);
    dwfl_report_end(dwfl_.get(), nullptr, nullptr);
  }
  if (mod == nullptr) {
    if (fd >= 0) close(fd);  // consumed only on success
    failed_.emplace_back(m->start, m->end);
    return nullptr;
  }
  ++reported_;
  // The module must hold addr (its file's segments and the mapping agree);
  // where it does not, the range is not tried again.
  Dwfl_Module* holding = module_at(dwfl_.get(), addr);
  if (holding == nullptr) failed_.emplace_back(m->start, m->end);
  return holding;
}

bool UnwindSession::read_memory(uint64_t addr, uint64_t& out) {
  const StackCopy& stack = *cur_.stack;
  if (auto v = stack.read(addr)) {
    out = *v;
    return true;
  }
  if (stack.beyond(addr)) {
    // Stack the sample did not take, if it took all it asked for; else the
    // stack's top was reached and this is no stack.
    (cur_.stack_whole ? cur_.result.cut : cur_.past_end) = true;
    return false;
  }
  // A mapped file's bytes (a GOT, a table the CFI reads).
  Dwfl_Module* mod = module(addr);
  if (mod == nullptr) return false;
  GElf_Addr bias = 0;
  Elf* elf = dwfl_module_getelf(mod, &bias);
  if (elf == nullptr) return false;
  auto off = Segments::of(elf).offset(addr - bias);
  size_t size = 0;
  const char* raw = elf_rawfile(elf, &size);
  if (!off || raw == nullptr || *off > size || size - *off < 8) return false;
  std::memcpy(&out, raw + *off, sizeof out);
  return true;
}

bool UnwindSession::set_registers(Dwfl_Thread* thread) const {
  return dwfl_thread_state_registers(thread, 0, kDwarfRegs, cur_.regs->data());
}

int UnwindSession::frame(Dwfl_Frame* state) {
  Dwarf_Addr pc;
  bool activation = false;
  if (!dwfl_frame_pc(state, &pc, &activation)) return DWARF_CB_ABORT;
  Dwarf_Word sp = 0;
  // The first frame's sp is the sampled one; a caller's is its CFA. A
  // frame seen before means the CFI leads round in a circle.
  if (dwfl_frame_reg(state, kDwarfSp, &sp) == 0) {
    const std::pair<uint64_t, uint64_t> key{pc, sp};
    if (std::find(cur_.seen.begin(), cur_.seen.end(), key) != cur_.seen.end()) {
      cur_.loop = true;
      return DWARF_CB_ABORT;
    }
    cur_.seen.push_back(key);
  }
  // The first frame is the sampled pc: looked up at its own address anyway.
  cur_.out->push_back(activation && cur_.result.frames > 0 ? pc | kActivationFrame : pc);
  ++cur_.result.frames;
  if (cur_.result.frames >= cur_.max_frames) {
    cur_.loop = true;  // capped: more frames may follow
    return DWARF_CB_ABORT;
  }
  // libdw unwinds the next frame with the CFI of this frame's module.
  (void)module(activation ? pc : pc - 1);
  return DWARF_CB_OK;
}

Unwound UnwindSession::unwind(const DwarfRegs& regs, const StackCopy& stack, bool stack_whole,
                              size_t max_frames, std::vector<uint64_t>& out) {
  // libdw unwinds a frame with its module's CFI before the frame callback
  // has seen the frame (and reported its module): when a module was
  // reported on the way, the frames after it may have been found without
  // its CFI (by libdw's frame-pointer guess). Unwind again then, with the
  // modules reported so far; each pass reports at least one more.
  constexpr int kMaxPasses = 8;
  const size_t start = out.size();
  Unwound r;
  for (int pass = 1;; ++pass) {
    const size_t reported = reported_;
    r = unwind_once(regs, stack, stack_whole, max_frames, out);
    if (reported_ == reported || pass == kMaxPasses) return r;
    out.resize(start);
  }
}

Unwound UnwindSession::unwind_once(const DwarfRegs& regs, const StackCopy& stack, bool stack_whole,
                                   size_t max_frames, std::vector<uint64_t>& out) {
  cur_ = Current{};
  cur_.regs = &regs;
  cur_.stack = &stack;
  cur_.stack_whole = stack_whole;
  cur_.max_frames = max_frames;
  cur_.out = &out;
  const uint64_t ip = regs[kDwarfRegs - 1];
  if (max_frames == 0) return cur_.result;
  // The architecture comes from a module's ELF file: attach once there is one.
  if (!attached_ && dwfl_ && module(ip) != nullptr)
    attached_ = dwfl_attach_state(dwfl_.get(), nullptr, pid_, &kThreadCallbacks, this);
  if (!attached_) {
    // Nothing to unwind with: the sampled ip alone, then the unknown.
    out.push_back(ip);
    out.push_back(0);
    cur_.result.frames = 2;
    cur_.result.stopped = true;
    return cur_.result;
  }
  (void)module(ip);
  int rc = dwfl_getthread_frames(dwfl_.get(), pid_, frame_callback, this);
  // 0: the outermost frame was reached (its return address is undefined),
  // or libdw could not read a return address (it takes that for the end:
  // above the copy, that is a cut, or past the stack's top). Other reads
  // may fail on the way (a callee-saved register the sample has no good
  // value for): libdw goes on without that register.
  if (rc != 0 || cur_.loop || cur_.result.cut || cur_.past_end) {
    if (cur_.result.frames == 0) {
      out.push_back(ip);
      ++cur_.result.frames;
    }
    out.push_back(0);
    ++cur_.result.frames;
    cur_.result.stopped = true;
  }
  return cur_.result;
}

}  // namespace tracekit::symbols
