// opensnoop: every open() and openat() with its file name and the file
// descriptor it returned (perf-tools' opensnoop).
//
// The file name comes from an entry probe made by session::SyscallStrings
// (kprobes, else eprobes, else uprobes on the C library's wrappers), the
// descriptor from syscalls:sys_exit_open(at), paired per thread; both are
// read raw from a private tracefs instance. -p/-L are kernel filters on
// every event; -n (process name), the file name pattern and -x (failed
// opens) are applied here. Live by default; buffered (-d SECS): the buffer
// is enlarged, nothing is read while tracing, and everything is read and
// printed once at the end, with the events the buffer refused reported.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>

#include "session/run.hpp"
#include "session/syscall_strings.hpp"
#include "util/result.hpp"

namespace tracekit::opensnoop {

struct Options {
  std::optional<int> pid;               // -p: this process's threads, later ones too
  std::optional<int> tid;               // -L: this thread
  std::string name;                     // -n: a regex searched in the process name
  std::string filename;                 // a regex searched in the file name
  bool failed_only = false;             // -x
  bool timestamps = false;              // -t
  std::optional<double> buffered_secs;  // -d
};

// Per-CPU buffer size in buffered mode.
inline constexpr size_t kBufferedKb = 8192;

// The system calls traced: open (absent on some architectures) and openat.
std::vector<session::SyscallString> open_calls();

class Snooper : public session::Engine {
 public:
  // Error: a bad pattern (-n, filename), no such PID/TID, no way to read
  // file names here (the missing kernel features), or a setting the kernel
  // refused. How the file names are read is said on warn.
  static Result<Snooper> start(const Options& o, std::ostream& out, std::ostream& warn);
  Snooper(Snooper&&) noexcept;
  ~Snooper() override;

  // Live: waits up to timeout_ms, prints the opens completed, flushes.
  void poll(int timeout_ms) override;
  void stop() override;
  // Unless stdout's reader has gone: reads and prints what is left. Then
  // reports on err the events the buffers refused, and the opens whose
  // return came without an entry (no file name: not printed).
  void report(std::ostream& out, std::ostream& err) override;

  // The column header ("COMM PID FD FILE", "TIMEs" first with -t).
  std::string header() const;
  session::StringPath path() const;
  const std::string& how() const;
  uint64_t printed() const;
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Snooper(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::opensnoop
