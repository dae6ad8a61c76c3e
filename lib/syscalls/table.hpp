// System call names and numbers of this machine's native architecture, from
// libseccomp's tables (the ones seccomp filters are built from), not from a
// list of our own: the numbers differ between architectures, and libseccomp
// knows them for every architecture Debian builds.
#pragma once

#include <optional>
#include <span>
#include <utility>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit::syscalls {

// The number of syscall name on this architecture; nullopt when libseccomp
// does not know the name, or knows it only for other architectures.
std::optional<int> number(std::string_view name);

// The name of syscall nr on this architecture; "" when libseccomp knows none.
std::string name(int nr);

// The system calls this file knows beyond libseccomp's tables, as (name,
// number) on this architecture (x86-64: the ones newer than the libseccomp
// built against; elsewhere none). number() and name() fall back on them.
std::span<const std::pair<std::string_view, int>> newer_than_libseccomp();

// Syscall numbers are below this on every architecture libseccomp knows
// (x86-64: 0..~470; MIPS o32 starts at 4000); names() asks each in turn.
inline constexpr int kMaxNumber = 8192;

// Every syscall libseccomp knows on this architecture, as (number, name),
// by number. Computed once per process.
struct Syscall {
  int nr;
  std::string name;
};
const std::vector<Syscall>& all();

}  // namespace tracekit::syscalls
