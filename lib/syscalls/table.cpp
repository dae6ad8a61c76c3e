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
#include <utility>

namespace tracekit::syscalls {

namespace {

// System calls newer than the libseccomp tracekit is built against
// (bookworm's 2.5.4 ends at 456, futex_requeue), x86-64 only, as the
// kernel's arch/x86/entry/syscalls/syscall_64.tbl numbers them (numbers are
// never reused). Asked only for what libseccomp does not know, so a newer
// libseccomp wins. Without them their tracepoints stay perf events of their
// own (stackcount's raw_syscalls stand-in: 35 ms of teardown each) and
// syscount shows numbers. tests/runtime (SyscallTableRuntime) checks each
// against the kernel: the call fires its own sys_enter tracepoint
// (uretprobe and uprobe, which kill a caller outside the kernel's
// trampolines with SIGILL, in a child process).
#if defined(__x86_64__)
constexpr std::pair<std::string_view, int> kNewer[] = {
    {"uretprobe", 335},     {"uprobe", 336},
    {"statmount", 457},     {"listmount", 458},     {"lsm_get_self_attr", 459},
    {"lsm_set_self_attr", 460}, {"lsm_list_modules", 461}, {"mseal", 462},
    {"setxattrat", 463},    {"getxattrat", 464},    {"listxattrat", 465},
    {"removexattrat", 466}, {"open_tree_attr", 467}, {"file_getattr", 468},
    {"file_setattr", 469},
};
#else
constexpr std::pair<std::string_view, int> kNewer[] = {{"", -1}};
#endif

}  // namespace

std::span<const std::pair<std::string_view, int>> newer_than_libseccomp() {
  if (kNewer[0].second < 0) return {};
  return kNewer;
}

std::optional<int> number(std::string_view name) {
  std::string n(name);
  int nr = seccomp_syscall_resolve_name(n.c_str());
  if (nr >= 0) return nr;
  for (const auto& [newer, nnr] : newer_than_libseccomp())
    if (newer == name) return nnr;
  return std::nullopt;
}

std::string name(int nr) {
  if (nr < 0) return {};
  char* s = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, nr);
  if (!s) {
    for (const auto& [newer, nnr] : newer_than_libseccomp())
      if (nnr == nr) return std::string(newer);
    return {};
  }
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
