// Task names from the tracing directory's saved_cmdlines (the kernel's
// pid -> comm table of tasks that recorded events), for events that do not
// carry their task's name: read once, and again on a pid it does not know.
#pragma once

#include <string>
#include <unordered_map>

namespace tracekit::session {

class SavedComms {
 public:
  explicit SavedComms(std::string tracing_dir) : dir_(std::move(tracing_dir)) {}
  // The name of pid; output::kUnknownComm ("<...>") when the kernel has
  // none (or the file cannot be read).
  std::string operator()(int pid);

 private:
  std::string dir_;
  std::unordered_map<int, std::string> comms_;
};

}  // namespace tracekit::session
