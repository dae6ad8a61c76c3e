#include "perf/user_unwind.hpp"

#include <ostream>

namespace tracekit::perf {

Result<CallGraph> call_graph_option(std::string_view text, bool kernel_stacks_only) {
  auto cg = parse_call_graph(text);
  if (!cg) return cg.error();
  if (cg->dwarf() && kernel_stacks_only)
    return Error{
        0, "--call-graph dwarf unwinds user stacks: it cannot be combined with -K", {}, {}};
  return cg;
}

std::string cut_user_stacks_warning(uint64_t cut, uint32_t size) {
  return "WARNING: " + std::to_string(cut) + " user stacks were cut at " + std::to_string(size) +
         " bytes (--call-graph dwarf," + std::to_string(size) +
         "): their outer frames are missing.\n";
}

UserUnwinder::UserUnwinder(const CallGraph& cg, const perf_event_attr& attr,
                           symbols::UserSymbols& syms)
    : size_(cg.stack_size), max_frames_(callchain_depth(attr)), syms_(syms) {}

std::span<const uint64_t> UserUnwinder::frames(const Sample& s) {
  frames_.clear();
  if (s.regs_user.empty() || s.pid == 0) return {};
  const auto pid = static_cast<pid_t>(s.pid);
  syms_.note_process(pid);
  // A copy shorter than asked for ends at the stack's top: not a cut.
  auto u = syms_.unwind(pid, s.regs_user, kUnwindRegsMask, s.stack_user,
                        s.stack_user.size() == s.stack_user_size, max_frames_, frames_);
  if (u.cut) ++cut_;
  return frames_;
}

bool short_user_stack(std::span<const uint64_t> user,
                      const std::function<bool(uint64_t)>& is_code) {
  if (user.empty()) return false;
  if (user.size() == 1) return true;
  return !is_code(user[1]) || (user.size() > 2 && !is_code(user[2]));
}

bool user_stacks_look_truncated(uint64_t short_stacks, uint64_t stacks) {
  return short_stacks >= kMinShortUserStacks && short_stacks * 2 > stacks;
}

void ShortUserStacks::note(uint32_t pid, std::span<const uint64_t> user,
                           symbols::UserSymbols& syms) {
  if (user.empty() || pid == 0 || hinted_) return;
  if (seen_++ >= kEveryStack && seen_ % kSampleEvery != 0) return;
  const auto p = static_cast<pid_t>(pid);
  // A stack whose first frame is in no known code tells nothing of the
  // frames after it: its process's mappings are unknown (it exited before
  // they could be read), and every address would look like no code.
  if (!syms.in_file(p, user[0]) && !syms.lookup(p, user[0])) return;
  ++all_;
  // Return addresses: JIT code is known by its perf-PID.map symbols only.
  if (short_user_stack(user, [&](uint64_t addr) {
        return syms.in_file(p, addr) || syms.lookup(p, addr, true);
      }))
    ++short_;
}

void ShortUserStacks::hint(std::ostream& err) {
  if (hinted_ || !user_stacks_look_truncated(short_, all_)) return;
  err << kTruncatedUserStacksHint;
  hinted_ = true;
}

void UserUnwinder::warn(std::ostream& err) {
  if (cut_ > 0) err << cut_user_stacks_warning(cut_, size_);
  cut_ = 0;
}

}  // namespace tracekit::perf
