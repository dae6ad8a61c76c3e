// Which tools and options work on this host, and by which path: for each
// tool (and each option that needs more than the tool itself), the ways the
// code can do it, in the order it prefers them, each with the features it
// needs. The first way whose features are all present is the one a run
// takes; when none is, the option does not work, and the features missing
// from the way closest to working say why. The table mirrors what the tools
// do today: a fallback is listed only once the code has it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernel/features.hpp"

namespace tracekit::kernel {

struct Way {
  std::string_view path;        // "perf cpu-clock sampling with callchains"
  std::vector<Feature> needs;   // all of them
};

struct ToolUse {
  std::string_view tool;    // "offcputime"
  std::string_view option;  // "" for the tool itself, else "-s", "-p PID", ...
  std::vector<Way> ways;    // preferred first
};

// Every tool and option, as the tools are built today.
const std::vector<ToolUse>& tool_uses();

// What a use comes to on a host.
struct Verdict {
  const Way* way = nullptr;        // the way taken; null: it does not work here
  std::vector<Feature> missing;    // of the way closest to working, when none works
};
Verdict judge(const ToolUse& use, Features& features);

}  // namespace tracekit::kernel
