// Task names from the tracing directory's saved_cmdlines (the kernel's
// pid -> comm table of tasks that recorded events), for events that do not
// carry their task's name: read once, and again on a pid it does not know.
#pragma once

#include <optional>
#include <string>
#include <unordered_map>

namespace tracekit::session {

class SavedComms {
 public:
  explicit SavedComms(std::string tracing_dir) : dir_(std::move(tracing_dir)) {}
  // The name of pid; when the kernel's table has none (it holds a few
  // hundred tasks, and busy hosts evict them), /proc/PID/comm while the
  // task lives; else output::kUnknownComm ("<...>").
  std::string operator()(int pid);
  // The same, but nullopt where operator() says "<...>".
  std::optional<std::string> known(int pid);

 private:
  std::string dir_;
  std::unordered_map<int, std::string> comms_;
};

}  // namespace tracekit::session
