// syscount's tables, as perf-tools' syscount prints them: a header line,
// then one row per key, by ascending count (ties by the row's text), the
// last top rows only with -t.
//
//   COMM                COUNT          (by process name, the default)
//   PID    COMM                COUNT   (-v)
//   SYSCALL              COUNT         (-c)
//   PID    COMM             SYSCALL              COUNT   (-cv)
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace tracekit::output {

struct SyscountColumns {
  bool pid = false;      // PID (-v)
  bool comm = true;      // COMM (not with -c alone)
  bool syscall = false;  // SYSCALL (-c)
};

struct SyscountRow {
  int pid = 0;
  std::string comm;
  std::string syscall;
  uint64_t count = 0;
};

// The columns of perf-tools' modes: -c by syscall, -v with PID.
SyscountColumns syscount_columns(bool by_syscall, bool verbose);

// Prints the header and the rows (rows with a zero count left out). Pure.
void syscount_table(std::ostream& out, const SyscountColumns& c, std::vector<SyscountRow> rows,
                    std::optional<size_t> top);

// A syscall's name in the table: the kernel table's name (libseccomp's),
// or "syscall_NR" for a number without one.
std::string syscall_label(long nr);

}  // namespace tracekit::output
