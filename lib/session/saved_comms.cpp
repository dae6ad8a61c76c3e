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
  return it == comms_.end() ? std::string(output::kUnknownComm) : it->second;
}

}  // namespace tracekit::session
