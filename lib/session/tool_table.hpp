// The tool table: every tool and command of the multi-call binary, each
// registered from its own folder (tools/<tool>/main.cpp) with its name, its
// summary, its entry point and its backends. The dispatcher (tools/tracekit),
// `tracekit features` and the tests read it; adding a tool adds a folder and
// nothing here.
//
// A tool's backends are its uses: for the tool itself (option "") and for
// each option that needs more than the tool, the ways the code can do it,
// preferred first, each with the kernel features it needs
// (kernel/tool_paths.hpp).
//
// Registration runs before main() (a static RegisterTool in each tool's
// main.cpp); the tools' objects are linked into the binary one by one, not
// from an archive, so that none is dropped.
#pragma once

#include <string_view>
#include <vector>

#include "kernel/tool_paths.hpp"
#include "session/entry.hpp"

namespace tracekit::session {

// One option's ways ("" for the tool itself).
struct Use {
  std::string_view option;
  std::vector<kernel::Way> ways;
};

struct Tool {
  std::string_view name = {};     // "killsnoop": its symlink, "tracekit killsnoop"
  std::string_view summary = {};  // one line for tracekit's list
  // Parses the command line, sets the run up (session/entry.hpp).
  Outcome (*main)(int argc, char** argv) = nullptr;
  std::vector<Use> uses = {};                  // its backends (none: tracefs only)
  std::vector<std::string_view> aliases = {};  // other names, links of their own
  // A command of the multi-call binary ("tracekit features"): no symlink.
  bool command = false;
};

struct RegisterTool {
  explicit RegisterTool(Tool t);
};

// Every registered tool and command, by name.
const std::vector<Tool>& tools();

// The tool (not command) called name, or one of its aliases.
const Tool* find_tool(std::string_view name);
// The command called name.
const Tool* find_command(std::string_view name);

// Every tool's uses, by tool name, then those the tools share
// (kernel::shared_uses(): the perf readers').
const std::vector<kernel::ToolUse>& tool_uses();

}  // namespace tracekit::session
