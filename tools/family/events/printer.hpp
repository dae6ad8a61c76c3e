// The engine of the tools that print events (perf-tools' tpoint, kprobe,
// uprobe): the run's events are enabled in a private instance (with their
// filter, -p/-L, and stacks from options/stacktrace or options/userstacktrace
// with -s; the caller of an entry probe from a fetch argument, see
// Options::caller_field) and read raw
// per CPU; each is printed as the kernel's trace file prints it
// (output/event_text.hpp), in timestamp order within each read.
//
// Live by default: printed as read. Buffered (-d): the buffer is enlarged,
// nothing is read while tracing, and everything is read and printed at the
// end, with the events the buffer could not hold reported.
#pragma once

#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "session/run.hpp"
#include "session/trace_session.hpp"
#include "util/result.hpp"

namespace tracekit::events {

struct Options {
  std::string tool;           // for messages: "tpoint"
  std::optional<int> pid;     // -p: every thread of this process, later ones too
  std::optional<int> tid;     // -L: this thread
  std::string filter;         // the kernel's filter syntax, on every event
  bool stacks = false;        // -s: kernel stacks
  bool user_stacks = false;   // -s of uprobe: user stacks, symbolized
  bool headers = false;       // -H: the trace file's column header
  bool buffered = false;      // -d
  bool kernel_addresses = false;  // kprobe events: their address printed as a symbol
  bool user_addresses = false;    // uprobe events: their address printed as 0x...
  // With user_stacks: the name of a fetch argument that holds the return
  // address at the stack pointer of a probe at a function's entry (the
  // caller, which a frame-pointer walk from there skips). Where an event has
  // it, it is inserted as the user stack's second frame (unless the kernel's
  // walk has it already; the stack keeps the record's length, at most 8
  // frames) and is not printed: the event's line is the one the kernel prints
  // without it, which must be its last argument. "" for none.
  std::string caller_field;
};

// Sets out to a user stack with the caller of a probe at a function's entry
// (the return address at its stack pointer) as its second frame, at most max
// frames (the deepest dropped; max 2 at least). The stack as it is when it is
// empty, caller is 0, or its second frame is caller already (a walker that
// has it). Pure.
void with_caller(std::span<const uint64_t> stack, uint64_t caller, size_t max,
                 std::vector<uint64_t>& out);

// Removes the event line's last argument " NAME=VALUE" (the line starts at
// begin in text and ends at the next newline or text's end), when it is
// name's; nothing else. Pure.
void drop_last_argument(std::string& text, size_t begin, std::string_view name);

// Per-CPU buffer size in buffered mode.
inline constexpr size_t kBufferedKb = 8192;

class Printer : public session::Engine {
 public:
  // Takes the run's trace session (its probes created by the tool) and
  // starts tracing their events. Error: no such PID/TID, or a setting the
  // kernel refused (a bad filter: with the kernel's error_log line).
  static Result<Printer> start(session::TraceSession trace, const Options& o, std::ostream& out,
                               std::ostream& warn);
  Printer(Printer&&) noexcept;
  ~Printer() override;

  // The -H header, as the kernel's trace file starts ("# tracer: nop" ...).
  std::string header() const;

  void poll(int timeout_ms) override;
  void stop() override;
  // Reads and prints what is left (the -H header first, in buffered mode),
  // then reports lost events on err.
  void report(std::ostream& out, std::ostream& err) override;

  uint64_t printed() const;
  uint64_t dropped() const;

 private:
  struct Impl;
  explicit Printer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::events
