#include "syscalls/raw.hpp"

#include <algorithm>

#include "kernel/feature.hpp"
#include "syscalls/table.hpp"
#include "tracefs/filter.hpp"

namespace tracekit::syscalls {

namespace {

constexpr std::string_view kEnterPrefix = "sys_enter_";
constexpr std::string_view kExitPrefix = "sys_exit_";

}  // namespace

std::string_view raw_event(bool exit) { return exit ? "sys_exit" : "sys_enter"; }

Result<RawEvent> to_raw(std::string_view event) {
  RawEvent r;
  std::string_view name;
  if (event.substr(0, kEnterPrefix.size()) == kEnterPrefix) {
    name = event.substr(kEnterPrefix.size());
  } else if (event.substr(0, kExitPrefix.size()) == kExitPrefix) {
    r.exit = true;
    name = event.substr(kExitPrefix.size());
  } else {
    return Error{0, "\"" + std::string(event) + "\" is not a syscall event", {},
                 "syscall events are sys_enter_NAME and sys_exit_NAME"};
  }
  auto nr = name.empty() ? std::nullopt : number(name);
  if (!nr)
    return Error{0,
                 "no system call named \"" + std::string(name) +
                     "\" on this architecture (libseccomp knows none)",
                 {},
                 "this kernel has no syscall tracepoints, and raw_syscalls needs the number; "
                 "names are as in syscall(2)"};
  r.nr = *nr;
  return r;
}

std::vector<std::string> event_names() {
  std::vector<std::string> out;
  for (const Syscall& s : all()) {
    out.push_back(std::string(kEnterPrefix) + s.name);
    out.push_back(std::string(kExitPrefix) + s.name);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string event_name(bool exit, long nr) {
  std::string n = nr >= 0 && nr < kMaxNumber ? name(static_cast<int>(nr)) : std::string();
  if (n.empty()) n = "#" + std::to_string(nr);
  return std::string(exit ? kExitPrefix : kEnterPrefix) + n;
}

std::string id_filter(std::vector<int> nrs) {
  std::sort(nrs.begin(), nrs.end());
  nrs.erase(std::unique(nrs.begin(), nrs.end()), nrs.end());
  return tracefs::equals_any("id", nrs);
}

std::string filter_hint(std::string_view raw_event) {
  const bool exit = raw_event == "sys_exit";
  return "this kernel has no syscall tracepoints: the filter applies to " +
         std::string(kRawSystem) + ":" + std::string(raw_event) +
         (exit ? ", whose fields are id and ret" : ", whose fields are id and args (which "
                                                    "filters cannot index)");
}

std::string fallback_note(bool forced) {
  using kernel::Feature;
  return kernel::missing_error(Feature::kSyscallTracepoints, forced).message + ": tracing " +
         std::string(kernel::info(Feature::kSyscallTracepoints).fallback);
}

}  // namespace tracekit::syscalls
