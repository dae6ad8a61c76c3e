// How this works: seccomp_syscall_resolve_name() answers a name for the
// native architecture with its number, or a negative number for "unknown"
// (__NR_SCMP_ERROR) and for syscalls that exist on other architectures only
// (libseccomp's pseudo-syscall numbers, all negative);
// seccomp_syscall_resolve_num_arch() answers a number with a malloc()ed name
// or null. libseccomp has no "list every syscall" call, so all() asks every
// number below kMaxNumber.
#include "syscalls/table.hpp"

#include <seccomp.h>

#include <cstdlib>

namespace tracekit::syscalls {

std::optional<int> number(std::string_view name) {
  std::string n(name);
  int nr = seccomp_syscall_resolve_name(n.c_str());
  if (nr < 0) return std::nullopt;
  return nr;
}

std::string name(int nr) {
  if (nr < 0) return {};
  char* s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (!s) return {};
  std::string out(s);
  std::free(s);
  return out;
}

const std::vector<Syscall>& all() {
  static const std::vector<Syscall> table = [] {
    std::vector<Syscall> t;
    for (int nr = 0; nr < kMaxNumber; ++nr) {
      std::string n = name(nr);
      if (!n.empty()) t.push_back({nr, std::move(n)});
    }
    return t;
  }();
  return table;
}

}  // namespace tracekit::syscalls
