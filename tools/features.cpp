// tracekit features: the kernel features the tools use, found or not on this
// host, and for each tool and option whether it works here and by which
// path.
#include <iostream>
#include <string>

#include "cli/command.hpp"
#include "kernel/features.hpp"
#include "kernel/tool_paths.hpp"
#include "tools.hpp"
#include "util/json.hpp"

namespace tracekit::tools {

namespace {

std::string_view state_name(kernel::State s) {
  switch (s) {
    case kernel::State::kPresent: return "yes";
    case kernel::State::kAbsent: return "no";
    case kernel::State::kForcedOff: return "off";
  }
  return "?";
}

std::string names(const std::vector<kernel::Feature>& fs) {
  std::string out;
  for (auto f : fs) out += (out.empty() ? "" : ", ") + std::string(kernel::info(f).name);
  return out;
}

// s left-aligned in width columns, and a space.
std::string col(std::string_view s, size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out + " ";
}

void print_text(kernel::Features& host) {
  std::cout << col("FEATURE", 21) << col("HAS", 4) << col("PROVIDED BY", 46) << "WITHOUT IT\n";
  for (const auto& i : kernel::feature_table())
    std::cout << col(i.name, 21) << col(state_name(host.state(i.id)), 4)
              << col(i.provided_by, 46) << (i.fallback.empty() ? "-" : i.fallback) << "\n";
  std::cout << "\n" << col("TOOL", 14) << col("OPTION", 32) << "HERE\n";
  for (const auto& u : kernel::tool_uses()) {
    auto v = kernel::judge(u, host);
    std::cout << col(u.tool, 14) << col(u.option.empty() ? "-" : u.option, 32)
              << (v.way ? "works: " + std::string(v.way->path) : "no: needs " + names(v.missing))
              << "\n";
  }
}

void print_json(kernel::Features& host) {
  std::cout << "{\"features\": [";
  bool first = true;
  for (const auto& i : kernel::feature_table()) {
    std::cout << (first ? "\n" : ",\n") << "  {\"name\": " << json_string(i.name)
              << ", \"state\": " << json_string(state_name(host.state(i.id)))
              << ", \"what\": " << json_string(i.what)
              << ", \"provided_by\": " << json_string(i.provided_by)
              << ", \"fallback\": " << json_string(i.fallback) << "}";
    first = false;
  }
  std::cout << "\n], \"tools\": [";
  first = true;
  for (const auto& u : kernel::tool_uses()) {
    auto v = kernel::judge(u, host);
    std::cout << (first ? "\n" : ",\n") << "  {\"tool\": " << json_string(u.tool)
              << ", \"option\": " << json_string(u.option)
              << ", \"works\": " << (v.way ? "true" : "false")
              << ", \"path\": " << json_string(v.way ? v.way->path : "") << ", \"missing\": [";
    for (size_t k = 0; k < v.missing.size(); ++k)
      std::cout << (k ? ", " : "") << json_string(kernel::info(v.missing[k]).name);
    std::cout << "]}";
    first = false;
  }
  std::cout << "\n]}\n";
}

}  // namespace

int features_main(int argc, char** argv) {
  bool json = false;
  cli::Command cmd("tracekit features", "[-h] [--json]");
  cmd.flag("json", &json, "print JSON")
      .example("tracekit features", "what this kernel offers, and what works here")
      .example("TRACEKIT_KERNEL_FEATURES=-context_switch tracekit features",
               "as the tools see it with a feature forced off");
  if (auto code = cmd.parse(argc, argv)) return *code;
  auto& host = kernel::Features::host();
  if (json)
    print_json(host);
  else
    print_text(host);
  return cli::kExitOk;
}

}  // namespace tracekit::tools
