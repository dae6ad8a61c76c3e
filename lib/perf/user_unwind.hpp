// --call-graph dwarf for the perf readers: the user side of each sample
// unwound from its registers and stack copy (symbols::UserSymbols::unwind),
// and the stacks cut at the copy's SIZE, counted and warned about.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perf/sample.hpp"
#include "symbols/user.hpp"

namespace tracekit::perf {

// --call-graph's argument as a tool takes it (parse_call_graph), with -K
// (kernel stacks only) or without: dwarf has nothing to unwind with -K.
// Error: the usage error to print.
Result<CallGraph> call_graph_option(std::string_view text, bool kernel_stacks_only);

// "WARNING: N user stacks were cut at SIZE bytes (--call-graph dwarf,SIZE):
// their outer frames are missing.\n" Pure.
std::string cut_user_stacks_warning(uint64_t cut, uint32_t size);

class UserUnwinder {
 public:
  // attr: the sampled event's, after request_user_stack() and
  // request_callchains() (its depth caps the frames). syms must outlive this.
  UserUnwinder(const CallGraph& cg, const perf_event_attr& attr, symbols::UserSymbols& syms);

  // The user frames of s (of process s.pid), leaf first, as a callchain's
  // user side: empty without a user context (a kernel thread). Valid until
  // the next call.
  std::span<const uint64_t> frames(const Sample& s);

  // Stacks cut at SIZE so far.
  uint64_t cut() const { return cut_; }
  // cut_user_stacks_warning() when some were; then counts from zero again.
  void warn(std::ostream& err);

 private:
  uint32_t size_;
  size_t max_frames_;
  symbols::UserSymbols& syms_;
  std::vector<uint64_t> frames_;
  uint64_t cut_ = 0;
};

// fp mode: whether a sample's user callchain (leaf first, as the kernel's
// frame-pointer walk gives it) ends after one or two frames. It does when
// it has one frame only, or when its second or third frame is no code
// (is_code false: an address in no file the process maps and in no JIT
// map, which is what the walk gives after following a frame pointer that
// was none, in code built without frame pointers). A walk through
// frame-pointer code ends where the C library's start code is (its second
// or third frame at the least: main's caller is code). Empty: no user
// side, not short. Pure.
bool short_user_stack(std::span<const uint64_t> user,
                      const std::function<bool(uint64_t)>& is_code);

// "user stacks look truncated (code built without frame pointers?); try
// --call-graph dwarf\n" when most of the user stacks noted were short:
// more than half of them, and at least kMinShortUserStacks. Pure.
inline constexpr uint64_t kMinShortUserStacks = 20;
bool user_stacks_look_truncated(uint64_t short_stacks, uint64_t stacks);
inline constexpr std::string_view kTruncatedUserStacksHint =
    "user stacks look truncated (code built without frame pointers?); try --call-graph dwarf\n";

// The samples' user stacks in fp mode (--call-graph fp, not -K, not dwarf),
// counted for the hint above: profile, offcputime and stackcount's perf
// backend note each sample's user side and print the hint at their report.
class ShortUserStacks {
 public:
  // The user side of a sample of process pid (a tgid), its frames looked up
  // in syms' mappings of pid; empty: not counted. The first kEveryStack
  // user stacks are each looked at, then one in kSampleEvery: the hint is a
  // proportion, and a look costs two searches (about a quarter of a fast
  // reader's time per event when every event was looked at).
  void note(uint32_t pid, std::span<const uint64_t> user, symbols::UserSymbols& syms);
  static constexpr uint64_t kEveryStack = 4096;
  static constexpr uint64_t kSampleEvery = 16;
  // The hint, once per run, when user_stacks_look_truncated().
  void hint(std::ostream& err);

 private:
  uint64_t short_ = 0, all_ = 0;
  uint64_t seen_ = 0;  // user stacks offered
  bool hinted_ = false;
};

}  // namespace tracekit::perf
