// Task names from the tracing directory's saved_cmdlines (the kernel's
// pid -> comm table of tasks that recorded events), for events that do not
// carry their task's name: read once, and again on a pid it does not know.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace tracekit::session {

// What the kernel's trace file calls a task it has no saved comm for.
inline constexpr std::string_view kUnknownComm = "<...>";

// The pid -> comm table of a tracing directory's saved_cmdlines text
// ("1234 bash" lines; a comm with a newline goes on over the next line).
// Pure.
std::unordered_map<int, std::string> parse_saved_cmdlines(std::string_view text);

class SavedComms {
 public:
  explicit SavedComms(std::string tracing_dir) : dir_(std::move(tracing_dir)) {}
  // The name of pid; when the kernel's table has none (it holds a few
  // hundred tasks, and busy hosts evict them), /proc/PID/comm while the
  // task lives; else kUnknownComm ("<...>").
  std::string operator()(int pid);
  // The same, but nullopt where operator() says "<...>".
  std::optional<std::string> known(int pid);

 private:
  std::string dir_;
  std::unordered_map<int, std::string> comms_;
};

}  // namespace tracekit::session
