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

void trim_past_stack_roots(std::vector<report::Record>& records, const report::FrameTable& frames) {
  for (auto& r : records) {
    auto ids = frames.ids(r.user);
    for (size_t i = 0; i < ids.size(); ++i) {
      if (is_stack_root(frames[ids[i]].name)) {
        r.user.size = static_cast<uint32_t>(i + 1);
        break;
      }
    }
  }
}

}  // namespace tracekit::symbols
