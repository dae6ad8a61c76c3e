#include "session/saved_comms.hpp"

#include "output/event_text.hpp"
#include "util/strings.hpp"

namespace tracekit::session {

std::optional<std::string> SavedComms::known(int pid) {
  auto it = comms_.find(pid);
  if (it == comms_.end()) {
    // Merged, not replaced: the kernel's table evicts names this one still
    // needs for events already read.
    if (auto t = read_file(dir_ + "/saved_cmdlines"))
      for (auto& [p, name] : output::parse_saved_cmdlines(*t)) comms_[p] = std::move(name);
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
  return known(pid).value_or(std::string(output::kUnknownComm));
}

}  // namespace tracekit::session
