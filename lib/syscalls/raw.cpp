#include "syscalls/raw.hpp"

#include <algorithm>
#include <optional>

#include "feature_table/feature_table.hpp"
#include "syscalls/table.hpp"
#include "tracefs/filter.hpp"

namespace tracekit::syscalls {

namespace {

constexpr std::string_view kEnterPrefix = "sys_enter_";
constexpr std::string_view kExitPrefix = "sys_exit_";

// Event names are the kernel's SYSCALL_DEFINE names, libseccomp's are those
// of syscall(2); where they differ, the event's syscall by its syscall(2)
// name. Not a table of numbers: libseccomp still gives those. first: the
// kernel's name means the other syscall even where libseccomp knows it
// (i386's "umount" is the old one-argument umount, while the kernel's
// sys_enter_umount is umount2 everywhere); otherwise the alias applies only
// to a name libseccomp does not know (i386 has a sendfile64 of its own).
struct Alias {
  std::string_view kernel, syscall;
  bool first;
};
constexpr Alias kAliases[] = {
    {"newstat", "stat", false},   {"newlstat", "lstat", false},
    {"newfstat", "fstat", false}, {"newuname", "uname", false},
    {"sendfile64", "sendfile", false}, {"umount", "umount2", true},
};

std::optional<int> number_of_event_name(std::string_view name) {
  for (const Alias& a : kAliases)
    if (a.first && a.kernel == name) return number(a.syscall);
  if (auto nr = number(name)) return nr;
  for (const Alias& a : kAliases)
    if (a.kernel == name) return number(a.syscall);
  return std::nullopt;
}

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
  auto nr = name.empty() ? std::nullopt : number_of_event_name(name);
  if (!nr)
    return Error{0,
                 "no system call named \"" + std::string(name) +
                     "\" on this architecture (libseccomp knows none)",
                 {},
                 "without syscall tracepoints, raw_syscalls traces a syscall by its number; "
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
  // Runs of three or more numbers as a range: a glob's hundreds of
  // syscalls fit the kernel's filter size (a page, for a perf event's).
  std::string s;
  auto term = [&](const std::string& t) { s += (s.empty() ? "" : " || ") + t; };
  for (size_t i = 0, j = 0; i < nrs.size(); i = j + 1) {
    for (j = i; j + 1 < nrs.size() && nrs[j + 1] == nrs[j] + 1;) ++j;
    if (j - i >= 2)
      term("(id >= " + std::to_string(nrs[i]) + " && id <= " + std::to_string(nrs[j]) + ")");
    else
      term(tracefs::equals_any("id", std::vector<int>(nrs.begin() + i, nrs.begin() + j + 1)));
  }
  return s;
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
