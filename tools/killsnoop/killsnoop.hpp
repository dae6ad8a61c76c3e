// killsnoop: every kill(), tkill() and tgkill() with who sent which signal
// to whom and what the call returned (perf-tools' killsnoop, which traces
// kill() alone).
//
// The calls' syscalls:sys_enter_* tracepoints give the target and the
// signal, their sys_exit_* the return value; the two are paired per thread
// (a thread is in one system call at a time). On kernels without syscall
// tracepoints, raw_syscalls:sys_enter/sys_exit with an id filter stand for
// them (syscalls/raw.hpp), and the arguments come from the raw record's
// args[] array. Everything is read raw from a private tracefs instance.
// -p (the target) is a kernel filter on the entry tracepoints where they
// exist (raw_syscalls' args cannot be filtered) and is always checked here
// too; -n (the sender's name, a regex) is applied here, and also in the
// kernel on the entries when it is a plain name (comm_filter). Live by default;
// buffered (-d SECS) as session::run does it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/run.hpp"
#include "session/thread_pairing.hpp"
#include "util/result.hpp"

namespace tracekit::killsnoop {

struct Options {
  std::optional<int> pid;               // -p: signals sent to this process
  std::string name;                     // -n: a regex searched in the sender's name
  bool signal_names = false;            // -s
  bool timestamps = false;              // -t
  std::optional<double> buffered_secs;  // -d
};

// Per-CPU buffer size, live and buffered.
inline constexpr size_t kBufferedKb = 4096;

// The system calls traced, in the order of kCalls.
enum class Call { kKill, kTkill, kTgkill };
inline constexpr Call kCalls[] = {Call::kKill, Call::kTkill, Call::kTgkill};
// "kill", "tkill", "tgkill": the name in syscalls:sys_enter_NAME.
std::string_view call_name(Call c);

// One decoded record of a thread: a call's entry (target, tgid, signal) or
// its exit (ret).
struct Record {
  uint64_t ts = 0;  // ns, the ring buffer's clock
  int tid = 0;      // common_pid: the sending thread
  bool exit = false;
  Call call = Call::kKill;
  int target = 0;  // kill's pid, tkill's and tgkill's tid
  int tgid = 0;    // tgkill's tgid; 0 for the others
  int sig = 0;
  int64_t ret = 0;
};

// The entry of a call from its first three arguments, as the kernel passes
// them (the low 32 bits of each register hold the int). Pure.
Record entry_from_args(Call c, const uint64_t args[3]);

// One completed call.
struct Kill {
  uint64_t ts = 0;  // the exit's time
  int tid = 0;
  Call call = Call::kKill;
  int target = 0, tgid = 0, sig = 0;
  int64_t ret = 0;  // 0, or -errno
};

// Whether the call was sent to process pid: kill's and tkill's target is
// pid, or tgkill's tgid or tid is. Pure.
bool sent_to(const Kill& k, int pid);

// The kernel filter on syscalls:sys_enter_<call> for calls sent to pid (as
// sent_to says): "pid == 42", or for tgkill "tgid == 42 || pid == 42". Pure.
std::string target_filter(Call c, int pid);

// A kernel filter on the task's name that admits what the -n regex
// matches, when the regex is a plain name with ^ and $ anchors at most
// ("kills": comm ~ "*kills*"; "^kills$": comm == "kills"); nullopt for any
// other regex (filtered here only). Pure.
std::optional<std::string> comm_filter(std::string_view regex);

// A signal's name: "SIGUSR2", "SIGRTMIN+3" (34 to 64); the number itself
// ("0", "99") when it has none. Pure.
std::string signal_name(int sig);

// Pairs each thread's entries with its exits, pure. A second entry before
// an exit replaces the first (its exit was lost); an exit without an entry
// (begun before tracing, or filtered out in the kernel) completes nothing.
class Pairing {
 public:
  std::optional<Kill> push(const Record& r);
  size_t pending() const { return pending_.pending(); }

 private:
  session::ThreadPairing<Record> pending_;
};

class Snooper : public session::Engine {
 public:
  // Error: no such process for -p, a bad -n regex, none of the calls can be
  // traced (the missing kernel feature), or a setting the kernel refused.
  // How the calls are traced is said on warn when it is a fallback.
  static Result<Snooper> start(const Options& o, std::ostream& out, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper() override;

  // Live: waits up to timeout_ms, prints the calls completed, flushes.
  void poll(int timeout_ms) override;
  void stop() override;
  // Unless stdout's reader has gone: reads and prints what is left. Then
  // reports on err the events the buffers refused.
  void report(std::ostream& out, std::ostream& err) override;

  // The column header ("COMM PID TPID SIGNAL RETURN", "TIMEs" first with -t).
  std::string header() const;
  uint64_t printed() const;
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::killsnoop
