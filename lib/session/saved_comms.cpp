#include "session/saved_comms.hpp"

#include "util/strings.hpp"

namespace tracekit::session {

std::unordered_map<int, std::string> parse_saved_cmdlines(std::string_view text) {
  // The kernel prints "%d %s\n" per task, the comm raw: a comm holding a
  // newline (prctl(PR_SET_NAME) takes any byte but NUL) goes on over the
  // next line. A line that is not "PID COMM" continues the comm before it
  // when the two still fit in a comm (TASK_COMM_LEN - 1 bytes); other lines
  // are dropped.
  constexpr size_t kMaxComm = 15;
  std::unordered_map<int, std::string> m;
  std::string* last = nullptr;
  for (auto line : split(text, '\n')) {
    auto sp = line.find(' ');
    auto pid = sp == std::string_view::npos ? std::nullopt : parse_int<int>(line.substr(0, sp));
    if (pid) {
      last = &m[*pid];
      *last = std::string(line.substr(sp + 1));
    } else if (last && !line.empty() && last->size() + 1 + line.size() <= kMaxComm) {
      *last += '\n';
      *last += line;
    } else {
      last = nullptr;
    }
  }
  return m;
}

std::optional<std::string> SavedComms::known(int pid) {
  auto it = comms_.find(pid);
  if (it == comms_.end()) {
    // Merged, not replaced: the kernel's table evicts names this one still
    // needs for events already read.
    if (auto t = read_file(dir_ + "/saved_cmdlines"))
      for (auto& [p, name] : parse_saved_cmdlines(*t)) comms_[p] = std::move(name);
    it = comms_.find(pid);
  }
  if (it != comms_.end()) return it->second;
  if (auto c = read_file("/proc/" + std::to_string(pid) + "/comm")) {
    std::string name(trim(*c));
    if (!name.empty()) return name;
  }
  return std::nullopt;
}

std::string SavedComms::operator()(int pid) {
  return known(pid).value_or(std::string(kUnknownComm));
}

}  // namespace tracekit::session
