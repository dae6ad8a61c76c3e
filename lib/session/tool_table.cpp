#include "session/tool_table.hpp"

#include <algorithm>

namespace tracekit::session {

namespace {

std::vector<Tool>& table() {
  static std::vector<Tool> t;
  return t;
}

bool& sealed() {
  static bool s = false;
  return s;
}

}  // namespace

RegisterTool::RegisterTool(Tool t) {
  // Registration happens before main(); nothing reads the table before.
  table().push_back(std::move(t));
}

const std::vector<Tool>& tools() {
  if (!sealed()) {
    std::sort(table().begin(), table().end(),
              [](const Tool& a, const Tool& b) { return a.name < b.name; });
    sealed() = true;
  }
  return table();
}

const Tool* find_tool(std::string_view name) {
  for (const auto& t : tools()) {
    if (t.command) continue;
    if (t.name == name) return &t;
    for (auto a : t.aliases)
      if (a == name) return &t;
  }
  return nullptr;
}

const Tool* find_command(std::string_view name) {
  for (const auto& t : tools())
    if (t.command && t.name == name) return &t;
  return nullptr;
}

const std::vector<kernel::ToolUse>& tool_uses() {
  static const std::vector<kernel::ToolUse> uses = [] {
    std::vector<kernel::ToolUse> v;
    for (const auto& t : tools())
      for (const auto& u : t.uses) v.push_back({t.name, u.option, u.ways});
    for (auto& u : kernel::shared_uses()) v.push_back(std::move(u));
    return v;
  }();
  return uses;
}

}  // namespace tracekit::session
