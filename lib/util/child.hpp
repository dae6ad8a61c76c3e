// A command run by a tool that traces it (syscount's `command` mode): made
// stopped, so that the tool can point its tracing at the child's PID before
// the command's first instruction, then let go.
//
// How this works: the parent finds the program on PATH first (so that the
// child makes exactly one execve, not one per PATH entry), then forks; the
// child stops itself with a raw kill(SIGSTOP) (no libc wrapper: raise()
// masks signals around it, which would be more syscalls after the resume),
// and the parent waits until it is stopped. resume() sends SIGCONT: the
// child's next syscall is the execve of the command.
#pragma once

#include <string>
#include <vector>

#include "util/result.hpp"

namespace tracekit {

class StoppedChild {
 public:
  // argv[0] is the program (a path, or a name looked up on PATH). Error: no
  // such program (ENOENT, naming it), fork failed, or the child died before
  // it stopped.
  static Result<StoppedChild> spawn(const std::vector<std::string>& argv);
  StoppedChild(StoppedChild&& o) noexcept;
  StoppedChild& operator=(StoppedChild&&) = delete;
  // A child still running is sent SIGTERM (SIGKILL a second later) and
  // reaped.
  ~StoppedChild();

  int pid() const { return pid_; }
  // Lets the child go on to exec the command. Error: kill failed.
  Status resume();
  // Whether the child has exited (reaped here, without waiting).
  bool exited();

 private:
  StoppedChild() = default;
  int pid_ = -1;
  bool reaped_ = false;
};

// The program path execv would run for name: name itself when it has a
// '/', else the first executable regular file name in PATH's directories
// (a default PATH when unset). nullopt: none.
std::optional<std::string> find_program(const std::string& name);

}  // namespace tracekit
