#include "session/saved_comms.hpp"

#include "output/event_text.hpp"
#include "util/strings.hpp"

namespace tracekit::session {

std::string SavedComms::operator()(int pid) {
  auto it = comms_.find(pid);
  if (it == comms_.end()) {
    if (auto t = read_file(dir_ + "/saved_cmdlines")) comms_ = output::parse_saved_cmdlines(*t);
    it = comms_.find(pid);
  }
  if (it != comms_.end()) return it->second;
  if (auto c = read_file("/proc/" + std::to_string(pid) + "/comm")) {
    std::string name(trim(*c));
    if (!name.empty()) return name;
  }
  return std::string(output::kUnknownComm);
}

}  // namespace tracekit::session
