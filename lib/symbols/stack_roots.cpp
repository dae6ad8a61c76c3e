#include "symbols/stack_roots.hpp"

#include <algorithm>
#include <array>

namespace tracekit::symbols {

bool is_stack_root(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kRoots = {
      "_start", "__libc_start_main", "__libc_start_call_main", "start_thread", "__clone",
      "__clone3", "clone", "clone3", "libc_start_main_stage2"};
  return std::find(kRoots.begin(), kRoots.end(), name) != kRoots.end();
}

}  // namespace tracekit::symbols
