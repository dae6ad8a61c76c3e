// One process's unwinding session (UserSymbols::unwind): a libdwfl session
// with the thread state callbacks attached, whose modules are reported
// lazily, the first time a frame's pc (or a read) lands in a file the
// process maps. Internal to lib/symbols.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "symbols/dwfl_session.hpp"
#include "symbols/symbol.hpp"
#include "symbols/unwind.hpp"

namespace tracekit::symbols {

class UnwindSession {
 public:
  // mapping: the file mapping of pid holding an address (UserSymbols::mapping).
  UnwindSession(pid_t pid, std::function<std::optional<FileMapping>(uint64_t)> mapping);
  UnwindSession(const UnwindSession&) = delete;
  UnwindSession& operator=(const UnwindSession&) = delete;

  // See UserSymbols::unwind.
  Unwound unwind(const DwarfRegs& regs, const StackCopy& stack, bool stack_whole, size_t max_frames,
                 std::vector<uint64_t>& out);

  // libdwfl's callbacks reach the session through these.
  bool read_memory(uint64_t addr, uint64_t& out);
  bool set_registers(Dwfl_Thread* thread) const;
  int frame(Dwfl_Frame* state);

 private:
  // One pass of unwind().
  Unwound unwind_once(const DwarfRegs& regs, const StackCopy& stack, bool stack_whole,
                      size_t max_frames, std::vector<uint64_t>& out);
  // The module holding addr, reported now if it was not; null when no
  // readable file is mapped there.
  Dwfl_Module* module(uint64_t addr);

  pid_t pid_;
  std::function<std::optional<FileMapping>(uint64_t)> mapping_;
  DwflPtr dwfl_{nullptr, &dwfl_end};
  bool attached_ = false;
  size_t reported_ = 0;  // modules reported so far
  // Mapped ranges whose files could not be reported: not tried again.
  std::vector<std::pair<uint64_t, uint64_t>> failed_;

  // The unwind under way.
  struct Current {
    const DwarfRegs* regs = nullptr;
    const StackCopy* stack = nullptr;
    bool stack_whole = false;
    size_t max_frames = 0;
    std::vector<uint64_t>* out = nullptr;
    Unwound result;
    bool loop = false;
    bool past_end = false;  // a read above a copy that holds the whole stack
    std::vector<std::pair<uint64_t, uint64_t>> seen;  // (pc, sp) of the frames
  } cur_;
};

}  // namespace tracekit::symbols
