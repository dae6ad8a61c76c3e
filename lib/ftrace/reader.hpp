// Reading an instance's ring buffers raw: per-CPU trace_pipe_raw pages
// (tracefs_cpu + kbuffer), records decoded with libtraceevent, each event
// paired with the kernel_stack record a stacktrace trigger (or
// func_stack_trace, or options/stacktrace) writes right after it, and with
// the user_stack record options/userstacktrace writes after that.
//
// Pairing: on one CPU, an event is followed by its kernel_stack record, then
// its user_stack record (same common_pid). They can straddle a page
// boundary, so pairing state is kept per CPU across reads; an event is
// handed out when its last expected stack arrives, or without it when the
// next event on that CPU shows none is coming (or at flush). The
// kernel_stack record's frame count comes from its size field, bounded by
// the record size (the format's caller[8] is not the length); a user_stack
// record holds a fixed caller[8], ended early by a 0 (or, on old kernels,
// ULONG_MAX) entry.
// Frames of the tracing machinery itself (trace_event_raw_event_*,
// __traceiter_*, kprobe_*, ftrace_*, ...) are stripped from the top
// (symbols/tracing_frames.hpp), so a stack starts at the traced function or
// its caller.
//
// Drops: with overwrite off (right for a reader), events refused by a full
// buffer show only in per_cpu/cpuN/stats "dropped events" (with overwrite
// on, events overwritten before they were read show as "overrun"); both are
// read at open and again by dropped(), and the difference is dropped().
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

struct tep_handle;

namespace tracekit::ftrace {

struct Event {
  int cpu = 0;
  uint64_t ts = 0;   // ns, the ring buffer's clock
  int pid = 0;       // common_pid
  int type = 0;      // common_type: the event id
  std::span<const uint8_t> data;      // the raw record, common fields included
  std::span<const uint64_t> stack;    // kernel stack, leaf first, tracing frames stripped
  bool has_stack = false;             // a kernel_stack record followed the event
  // The kernel_stack record itself, common fields included (empty without
  // one), and its timestamp: the kernel prints it as an entry of its own.
  std::span<const uint8_t> stack_record;
  uint64_t stack_ts = 0;
  // The user stack (options/userstacktrace): the user-space IP where the
  // event fired, then return addresses, as the kernel walked them (frame
  // pointers, at most 8); has_user_stack when a user_stack record followed.
  // user_tgid is the record's tgid: the process to resolve them in. The
  // record itself and its timestamp, as for the kernel stack.
  std::span<const uint64_t> user_stack;
  bool has_user_stack = false;
  int user_tgid = 0;
  std::span<const uint8_t> user_stack_record;
  uint64_t user_stack_ts = 0;
};

// Which stack records the events are expected to be followed by.
struct StackKinds {
  bool kernel = false;  // ftrace:kernel_stack
  bool user = false;    // ftrace:user_stack
};

class Reader {
 public:
  // Opens every online CPU's raw buffer of the instance named instance
  // (instances/<instance> under tracing_dir; "" for the top level), with
  // libtraceevent loaded with the formats of the given event systems, or
  // of single events where an entry is "system/event" (the "ftrace"
  // system, which defines kernel_stack and user_stack, is always added). stacks: the stack records to expect after events and pair.
  static Result<Reader> open(const std::string& tracing_dir, const std::string& instance,
                             const std::vector<std::string>& systems, StackKinds stacks);

  Reader(Reader&&) noexcept;
  Reader& operator=(Reader&&) noexcept;
  ~Reader();

  // The libtraceevent handle (event formats, for decoding fields of
  // Event::data); owned by the reader.
  tep_handle* tep() const;
  // The id of system:event, -1 if not loaded.
  int event_id(const std::string& system, const std::string& event) const;

  // Event::data and Event::stack point into the reader's buffers: valid
  // only during the call (copy what must outlive it).
  using Callback = std::function<void(const Event&)>;
  // After each page read: no event still to come in this poll() or
  // flush() has a timestamp before the argument (UINT64_MAX: the pass is
  // done). A consumer that orders events across CPUs can print the ones at
  // or before it. Not called in time-ordered mode.
  using Progress = std::function<void(uint64_t)>;
  // Streaming: waits up to timeout_ms for any CPU's buffer to have data,
  // then reads what is there and calls fn for every complete event, in order
  // per CPU, the CPUs' pages read interleaved by time. Returns the number of
  // events handed out.
  size_t poll(int timeout_ms, const Callback& fn, const Progress& progress = nullptr);
  // Reads everything left in the buffers (partial pages included) and hands
  // out every pending event: the end of a run, or buffered mode (-d), where
  // nothing was read while tracing.
  size_t flush(const Callback& fn, const Progress& progress = nullptr);

  // Time order across CPUs (off by default: a tool that only sums events
  // needs none): each poll() and flush() copies its events out and hands
  // them out by timestamp, CPUs merged. A tool that pairs events of one
  // thread (a syscall's entry and exit, an I/O's issue and completion)
  // needs it: the thread may move to another CPU in between, and the CPUs
  // are read a page at a time, so the later event can come first. One
  // pass sees every event written before its reads began, so pairs split
  // across two passes are left only when a CPU's reads were capped (a
  // producer faster than the reader).
  void set_time_ordered(bool on);

  // Events lost since open(): refused by a full buffer, or overwritten
  // unread in overwrite mode (per-CPU stats, summed; reads them each call).
  uint64_t dropped() const;
  // Events handed out without a stack they were expected to have.
  uint64_t unpaired() const;

 private:
  Reader() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::ftrace
