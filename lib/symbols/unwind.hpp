// DWARF unwinding of sampled user stacks (--call-graph dwarf): a sample
// carries the user registers and a copy of the top of the user stack
// (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER); libdw's unwinder walks
// the frames from them with the CFI (.eh_frame, .debug_frame) of the files
// the process maps. x86_64 only, as the rest of tracekit.
//
// The pure parts are here for tests: the register mapping and the reads of
// the stack copy. UserSymbols::unwind() is the unwinder (unwind.cpp), with
// one libdwfl session per process whose modules come from the mappings the
// symbolizer tracks.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace tracekit::symbols {

// x86_64 DWARF registers 0..16: rax rdx rcx rbx rsi rdi rbp rsp r8..r15,
// then rip (the return address column).
inline constexpr size_t kDwarfRegs = 17;
using DwarfRegs = std::array<uint64_t, kDwarfRegs>;

// perf's x86 register numbers (arch/x86/include/uapi/asm/perf_regs.h).
enum PerfReg : unsigned {
  kPerfAx = 0,
  kPerfBx = 1,
  kPerfCx = 2,
  kPerfDx = 3,
  kPerfSi = 4,
  kPerfDi = 5,
  kPerfBp = 6,
  kPerfSp = 7,
  kPerfIp = 8,
  kPerfR8 = 16,  // r8..r15 are 16..23
};

// The value of perf register reg in regs, a sample's registers of mask (as
// PERF_SAMPLE_REGS_USER lays them: lowest bit first); nullopt when mask has
// no such register or regs is too short.
std::optional<uint64_t> perf_reg(std::span<const uint64_t> regs, uint64_t mask, unsigned reg);

// The DWARF registers of a sample's registers; nullopt unless mask holds
// (and regs carries) every one of them.
std::optional<DwarfRegs> dwarf_regs(std::span<const uint64_t> regs, uint64_t mask);

// A sample's copy of the user stack: the bytes from sp up.
struct StackCopy {
  uint64_t sp = 0;
  std::span<const uint8_t> bytes;

  // The 8 bytes at addr, when all of them are in the copy.
  std::optional<uint64_t> read(uint64_t addr) const;
  // Whether addr is above the copy's end (the stack goes on there, but
  // the sample did not take it).
  bool beyond(uint64_t addr) const { return addr >= sp && addr - sp + 8 > bytes.size(); }
};

// Set in a frame UserSymbols::unwind() appends after the first when the
// frame's address is no return address but where the code resumes: a
// signal frame (the restorer the handler returns to, libc's __restore_rt)
// and the frame the signal interrupted. Such a frame is looked up at its
// own address, not at address - 1 (libdw's dwfl_frame_pc isactivation;
// perf does the same). User addresses never have the bit set.
inline constexpr uint64_t kActivationFrame = uint64_t{1} << 63;

// What UserSymbols::unwind() found.
struct Unwound {
  size_t frames = 0;  // appended
  // The unwinder needed stack above the copy: a deeper stack than the
  // sample's SIZE. The frames appended are right, the outer ones missing.
  bool cut = false;
  // The unwinder stopped before the outermost frame (no CFI for a pc,
  // unreadable memory, a loop, the frame cap): the frames appended are
  // followed by an unknown frame (address 0), as any unresolved frame prints.
  bool stopped = false;
};

}  // namespace tracekit::symbols
