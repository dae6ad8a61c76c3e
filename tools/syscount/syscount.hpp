// syscount: counts system calls by process name (the default), by process
// (-v), by syscall name (-c) or by both (-cv), system-wide, for one process
// (-p) or for a command it runs and everything the command starts
// (perf-tools' syscount).
//
// How this works: one tracepoint, raw_syscalls:sys_enter, in a private
// tracefs instance; its records (common_pid and the syscall number) are
// read raw per CPU and counted here. The kernel filters out our own
// syscalls (common_pid != ours); -p and the command are the instance's pid
// list (with event-fork for the command's children). Never the 300+
// syscalls:sys_enter_* tracepoints perf-tools enables: each costs the kernel
// a synchronisation to attach and detach (about 20 s for all of them here).
// Names come from this kernel's syscall table (syscalls/table.hpp); a
// number without a name is counted as "syscall_NR". Why a ring rather than
// perf counters: counting by name in the kernel needs one filtered counter
// per syscall number and CPU, each of whose filters runs on every syscall
// (hundreds per call), and by-process counts cannot be set up in advance.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "syscount/render.hpp"
#include "session/entry.hpp"

namespace tracekit::syscount {

struct Options {
  bool by_syscall = false;           // -c
  bool verbose = false;              // -v: with PIDs
  std::optional<size_t> top;         // -t
  std::optional<int> pid;            // -p
  std::optional<double> duration;    // -d
  std::vector<std::string> command;  // run and trace this command
};

// Per-CPU buffer size: a busy system makes millions of syscalls a second.
inline constexpr size_t kBufferKb = 16384;
// How often the buffers are read.
inline constexpr int kPollMs = 100;

// What is counted: each syscall's key (pid 0 and comm "" where the mode
// does not show them; nr -1 where it does not show the syscall).
class Tally {
 public:
  explicit Tally(output::SyscountColumns c) : columns_(c) {}
  // Counts one syscall nr by pid; comm is asked for once per pid (first
  // sight), only when the table shows it.
  template <typename CommOf>
  void add(int pid, long nr, CommOf&& comm_of) {
    const int key_pid = columns_.comm || columns_.pid ? pid : 0;
    const long key_nr = columns_.syscall ? nr : -1;
    const uint64_t k = key(key_pid, key_nr);
    // A busy caller repeats one syscall: the last key's count is kept at
    // hand (elements of an unordered_map do not move when it grows).
    if (last_ && k == last_key_) {
      ++*last_;
      return;
    }
    auto [it, fresh] = counts_.try_emplace(k, 0);
    ++it->second;
    last_key_ = k;
    last_ = &it->second;
    if (fresh && key_pid && !comms_.count(key_pid)) comms_.emplace(key_pid, comm_of(key_pid));
  }
  // The rows for output::syscount_table (by comm alone: summed over PIDs).
  std::vector<output::SyscountRow> rows() const;
  const output::SyscountColumns& columns() const { return columns_; }
  uint64_t total() const;

 private:
  static uint64_t key(int pid, long nr) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(pid)) << 32) |
           static_cast<uint32_t>(static_cast<int32_t>(nr));
  }
  output::SyscountColumns columns_;
  std::unordered_map<uint64_t, uint64_t> counts_;
  std::unordered_map<int, std::string> comms_;
  uint64_t last_key_ = 0;
  uint64_t* last_ = nullptr;
};

// perf-tools' first line: "Tracing... Ctrl-C to end.", "Tracing for 5
// seconds. Top 10 only...", "Tracing PID 923... Ctrl-C to end.",
// "Tracing while running: \"ls -l\"...". Pure.
std::string header_line(const Options& o);

// Sets syscount's run up (session/entry.hpp): its engine started, and the
// traced command (if any) let go once the header is out.
session::Outcome set_up(const Options& o);

}  // namespace tracekit::syscount
