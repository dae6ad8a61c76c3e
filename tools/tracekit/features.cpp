// tracekit features: the kernel features the tools use, found or not on this
// host, and for each tool and option whether it works here and by which
// path.
#include "kernel/features.hpp"

#include <unistd.h>

#include <fstream>
#include <iostream>
#include <string>

#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "kernel/tool_paths.hpp"
#include "util/json.hpp"

namespace tracekit::tools {

namespace {

// Not root, tracefs cannot be read (it is root's), nor changed: the
// features read from it were not probed, and nothing that traces through it
// can run. perf_event_open answers anyone, but what the tools open (events
// on every CPU, tracepoints) needs root unless kernel.perf_event_paranoid
// is -1.
struct Privilege {
  bool root = geteuid() == 0;
  int paranoid = 2;  // kernel.perf_event_paranoid (2 when unreadable)
  Privilege() { std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid; }
  bool perf_open() const { return root || paranoid <= -1; }
};

// Read from the tracing directory: not probed without root. (tracefs and
// debugfs' tracing are found from /proc/filesystems and the mounts.)
bool read_from_tracefs(kernel::Feature f) {
  return !kernel::perf_feature(f) && f != kernel::Feature::kTracefs &&
         f != kernel::Feature::kDebugfsTracing;
}

// What a use of a tool needs that this user lacks: "" when nothing (root),
// else the phrase after "no: needs ". A way through tracefs needs root; a
// way of perf features only, root or perf_event_paranoid -1.
std::string needs_privilege(const kernel::ToolUse& u, const Privilege& p) {
  if (p.root) return "";
  for (const auto& w : u.ways) {
    bool perf_only = true;
    for (auto f : w.needs) perf_only = perf_only && kernel::perf_feature(f);
    if (perf_only && p.perf_open()) return "";
  }
  for (const auto& w : u.ways) {
    bool perf_only = true;
    for (auto f : w.needs) perf_only = perf_only && kernel::perf_feature(f);
    if (perf_only)
      return "root (or kernel.perf_event_paranoid -1; it is " + std::to_string(p.paranoid) + ")";
  }
  return "root (tracefs)";
}

std::string_view state_name(kernel::State s) {
  switch (s) {
    case kernel::State::kPresent:
      return "yes";
    case kernel::State::kAbsent:
      return "no";
    case kernel::State::kForcedOff:
      return "off";
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

// The HAS column: "?" for a feature this user could not probe.
std::string_view has_column(kernel::Features& host, kernel::Feature f, const Privilege& p) {
  if (!p.root && read_from_tracefs(f) && host.state(f) != kernel::State::kForcedOff) return "?";
  return state_name(host.state(f));
}

void print_text(kernel::Features& host, const Privilege& p) {
  std::cout << col("FEATURE", 21) << col("HAS", 4) << col("PROVIDED BY", 46) << "WITHOUT IT\n";
  for (const auto& i : kernel::feature_table())
    std::cout << col(i.name, 21) << col(has_column(host, i.id, p), 4) << col(i.provided_by, 46)
              << (i.fallback.empty() ? "-" : i.fallback) << "\n";
  std::cout << "\n" << col("TOOL", 14) << col("OPTION", 32) << "HERE\n";
  for (const auto& u : session::tool_uses()) {
    std::cout << col(u.tool, 14) << col(u.option.empty() ? "-" : u.option, 32);
    if (std::string who = needs_privilege(u, p); !who.empty()) {
      std::cout << "no: needs " << who << "\n";
      continue;
    }
    auto v = kernel::judge(u, host);
    std::cout << (v.way ? "works: " + std::string(v.way->path) : "no: needs " + names(v.missing))
              << "\n";
  }
  if (!p.root)
    std::cout << "\nNot root: the features marked ? are read from tracefs, which only root can "
                 "read, and were not probed. Run tracekit features as root to see them.\n";
}

void print_json(kernel::Features& host, const Privilege& p) {
  std::cout << "{\"features\": [";
  bool first = true;
  for (const auto& i : kernel::feature_table()) {
    std::cout << (first ? "\n" : ",\n") << "  {\"name\": " << json_string(i.name) << ", \"state\": "
              << json_string(has_column(host, i.id, p) == "?" ? "unprobed"
                                                              : state_name(host.state(i.id)))
              << ", \"what\": " << json_string(i.what)
              << ", \"provided_by\": " << json_string(i.provided_by)
              << ", \"fallback\": " << json_string(i.fallback) << "}";
    first = false;
  }
  std::cout << "\n], \"tools\": [";
  first = true;
  for (const auto& u : session::tool_uses()) {
    const std::string who = needs_privilege(u, p);
    auto v = kernel::judge(u, host);
    if (!who.empty()) v = kernel::Verdict{};
    std::cout << (first ? "\n" : ",\n") << "  {\"tool\": " << json_string(u.tool)
              << ", \"option\": " << json_string(u.option)
              << ", \"works\": " << (v.way ? "true" : "false")
              << ", \"needs\": " << json_string(who)
              << ", \"path\": " << json_string(v.way ? v.way->path : "") << ", \"missing\": [";
    for (size_t k = 0; k < v.missing.size(); ++k)
      std::cout << (k ? ", " : "") << json_string(kernel::info(v.missing[k]).name);
    std::cout << "]}";
    first = false;
  }
  std::cout << "\n]}\n";
}

}  // namespace

session::Outcome features_main(int argc, char** argv) {
  bool json = false;
  cli::Command cmd("tracekit features", "[-h] [--json]");
  cmd.flag("json", &json, "print JSON")
      .example("tracekit features", "what this kernel offers, and what works here")
      .example("TRACEKIT_KERNEL_FEATURES=-context_switch tracekit features",
               "as the tools see it with a feature forced off");
  if (auto code = cmd.parse(argc, argv)) return *code;
  auto& host = kernel::Features::host();
  const Privilege privilege;
  if (json)
    print_json(host, privilege);
  else
    print_text(host, privilege);
  return cli::kExitOk;
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): a command of the multi-call
// binary, with no symlink.
namespace tracekit::tools {
namespace {
const session::RegisterTool kTool{{
    .name = "features",
    .summary = "the kernel features the tools use, and what works here",
    .main = features_main,
    .command = true,
}};
}  // namespace
}  // namespace tracekit::tools
