// execsnoop: every exec() that succeeded, with the new process's PID, its
// parent's PID and its arguments (perf-tools' execsnoop).
//
// sched:sched_process_exec says that an exec succeeded, in which thread
// (old_pid) and as which process (pid), and its file; sched_process_fork
// gives each child's parent. The arguments come from an entry probe on the
// exec system calls made by session::SyscallStrings with an argument vector
// (kprobes on __x64_sys_execve(at), else eprobes on
// syscalls:sys_enter_execve(at), else uprobes on the C library's execve,
// execveat and fexecve, where every exec function of glibc ends): the
// thread's last entry before its sched_process_exec is the exec that
// succeeded (execvp's failed tries of each PATH directory come before it,
// each ended by its sys_exit). An exec whose entry was not seen (a program
// that bypasses the C library, on the uprobe path) gets, as a last resort,
// /proc/PID/cmdline while the process lives (marked "[proc]"), else its
// file name (marked "[?]").
//
// The CPUs' buffers are read one after another, and exec moves a task to
// another CPU (sched_exec) between the entry and sched_process_exec: each
// poll's events are copied, sorted by time and then handled, and an exec
// whose entry has not come yet waits one more poll for it.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "session/run.hpp"
#include "session/syscall_strings.hpp"
#include "util/result.hpp"

namespace tracekit::execsnoop {

struct Options {
  int max_args = 8;                     // -a: arguments shown, at most kMaxArgs
  bool reexecs = false;                 // -r: also the second exec of a process
  bool timestamps = false;              // -t
  std::string name;                     // a regex searched in the new process's name
  std::optional<double> buffered_secs;  // -d
};

inline constexpr int kMaxArgs = 16;
// Per-CPU buffer size in buffered mode.
inline constexpr size_t kBufferedKb = 8192;

// The system calls traced: execve and execveat, with argv read to
// max_args + 1 elements (one more than shown, to know there were more).
std::vector<session::SyscallString> exec_calls(int max_args);

// The arguments as shown: the first max joined by spaces, then "[...]"
// when there were more. Pure.
std::string args_text(const std::vector<std::string>& argv, int max);
// The arguments of a /proc/PID/cmdline text (NUL-ended strings). Pure.
std::vector<std::string> cmdline_args(std::string_view cmdline);
// The process name an exec of file gives (its last path component, as the
// kernel takes it; not cut to the kernel's 15 characters). Pure.
std::string process_name(std::string_view filename);

// Parents (from forks) and which processes have been shown, pure. Bounded:
// past kMaxTracked entries (threads that never exec), each is forgotten.
class Lineage {
 public:
  static constexpr size_t kMaxTracked = 1 << 16;
  void fork(int parent, int child);
  // The parent of pid seen at its fork, or nullopt.
  std::optional<int> parent(int pid) const;
  // Whether an exec of pid is to be shown: the first shown since its
  // fork, or any with reexecs. Records it.
  bool first_exec(int pid, bool reexecs);

 private:
  std::unordered_map<int, int> parent_;
  std::unordered_set<int> execed_;
};

class Snooper : public session::Engine {
 public:
  // Error: a bad name pattern, no way to trace exec here (the missing
  // kernel features), or a setting the kernel refused. How the arguments
  // are read is said on warn.
  static Result<Snooper> start(const Options& o, std::ostream& out, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper() override;

  // Live: waits up to timeout_ms, prints the execs read, flushes.
  void poll(int timeout_ms) override;
  void stop() override;
  // Unless stdout's reader has gone: reads and prints what is left. Then
  // reports on err the events the buffers refused, and how many execs had
  // no arguments seen.
  void report(std::ostream& out, std::ostream& err) override;

  // The column header ("PID PPID ARGS", "TIMEs" first with -t).
  std::string header() const;
  // "uprobes on ...", or "" when no probe reads arguments (/proc only).
  std::string how() const;
  uint64_t printed() const;
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::execsnoop
