#include "syscount/render.hpp"

#include <algorithm>
#include <cstdio>

#include "syscalls/table.hpp"
#include "util/strings.hpp"

namespace tracekit::output {

namespace {

std::string row_text(const SyscountColumns& c, const SyscountRow& r, bool header) {
  char buf[256];
  std::string line;
  if (c.pid) {
    if (header)
      std::snprintf(buf, sizeof buf, "%-6s ", "PID");
    else
      std::snprintf(buf, sizeof buf, "%-6d ", r.pid);
    line += buf;
  }
  if (c.comm) {
    // A process's name is anyone's: control characters print as '?'.
    std::snprintf(buf, sizeof buf, "%-16s ", header ? "COMM" : printable(r.comm).c_str());
    line += buf;
  }
  if (c.syscall) {
    std::snprintf(buf, sizeof buf, "%-17s ", header ? "SYSCALL" : r.syscall.c_str());
    line += buf;
  }
  if (header)
    std::snprintf(buf, sizeof buf, "%8s\n", "COUNT");
  else
    std::snprintf(buf, sizeof buf, "%8llu\n", static_cast<unsigned long long>(r.count));
  return line + buf;
}

}  // namespace

SyscountColumns syscount_columns(bool by_syscall, bool verbose) {
  SyscountColumns c;
  c.pid = verbose;
  c.syscall = by_syscall;
  c.comm = !by_syscall || verbose;
  return c;
}

void syscount_table(std::ostream& out, const SyscountColumns& c, std::vector<SyscountRow> rows,
                    std::optional<size_t> top) {
  std::vector<std::pair<uint64_t, std::string>> lines;
  for (const auto& r : rows)
    if (r.count) lines.emplace_back(r.count, row_text(c, r, false));
  std::sort(lines.begin(), lines.end());
  if (top && lines.size() > *top) lines.erase(lines.begin(), lines.end() - *top);
  out << row_text(c, {}, true);
  for (const auto& [n, text] : lines) out << text;
}

std::string syscall_label(long nr) {
  std::string n = nr >= 0 && nr < syscalls::kMaxNumber ? syscalls::name(static_cast<int>(nr)) : "";
  return n.empty() ? "syscall_" + std::to_string(nr) : n;
}

}  // namespace tracekit::output
