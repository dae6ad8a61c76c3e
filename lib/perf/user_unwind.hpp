// --call-graph dwarf for the perf readers: the user side of each sample
// unwound from its registers and stack copy (symbols::UserSymbols::unwind),
// and the stacks cut at the copy's SIZE, counted and warned about.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
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

}  // namespace tracekit::perf
