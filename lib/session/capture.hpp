// Where stack tools read their events from.
//
// FtraceCapture: a private tracefs instance with the probes' events enabled
// and a "stacktrace" trigger on each (or the function tracer with
// func_stack_trace), read raw per CPU: kernel stacks, no user stacks, cheap.
// PerfCapture: perf_event_open on the same event ids on every CPU, one ring
// per CPU (perf::ring_pages), with PERF_SAMPLE_CALLCHAIN: kernel and user
// stacks, read through a perf::StackSampler.
//
// -p PID (CaptureOptions::pid) follows every thread of the process, threads
// it starts later included, and none of its child processes, as bcc does
// (it filters by tgid):
//  - ftrace: the instance's pid list (set_event_pid, and set_ftrace_pid for
//    the function tracer) holds the process's threads, and options/event-fork
//    (function-fork) makes the kernel add every task they create, at fork,
//    before it first runs. That admits child processes too: ThreadFilter
//    (session/thread_group.hpp) keeps the threads' events, from
//    task:task_newtask records traced in the same instance. A stacktrace
//    trigger is a post-call trigger (EVENT_CMD_FL_POST_TRIGGER): the kernel
//    runs it after the event is written, so the pid list gates the stacks
//    too. Kernels without those files (set_event_pid came in 4.4, the fork
//    options later; detected by the files, never by version) get a
//    common_pid filter naming the threads there are at the start: threads
//    started later are not traced (follows_new_threads()).
//  - perf: per-thread inherited events into the per-CPU rings (see
//    perf/follow.hpp); samples of child processes are dropped by their pid.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ftrace/reader.hpp"
#include "perf/follow.hpp"
#include "perf/per_cpu.hpp"
#include "perf/sample.hpp"
#include "session/probes.hpp"
#include "session/thread_group.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/instance.hpp"
#include "util/result.hpp"

namespace tracekit::session {

enum class Backend { kAuto, kFtrace, kPerf };

// Above this many events, stacks come from options/stacktrace rather than
// a trigger per event: removing a trigger costs the kernel a
// synchronisation (about 80 ms here), the option nothing per event.
inline constexpr size_t kMaxTriggerEvents = 16;

struct CaptureOptions {
  std::optional<int> pid;   // -p: every thread of this process; none: all
  // With pid (ftrace): the processes it starts too, at any depth (a command
  // run by the tool). Where forks cannot be followed, only pid's threads of
  // the start are traced (follows_new_threads() false).
  bool children = false;
  std::optional<int> tid;   // -L: this thread only (a common_pid filter)
  std::optional<int> cpu;   // only this CPU
  size_t buffer_kb = 0;     // ftrace per-CPU buffer size; 0: the kernel's default
  bool stacks = true;       // ftrace: stacktrace triggers / func_stack_trace
  // Stacks from the instance's options/stacktrace (written only for the
  // events the filters keep, one switch to undo) rather than a trigger per
  // event; triggers where the instance has no such option. Taken anyway for
  // more than kMaxTriggerEvents events.
  bool stack_option = false;
  // ftrace: the probe events' formats are loaded, for their fields. A tool
  // that reads only the records' common fields and stacks (stackcount -K)
  // sets false: 360 syscall formats took a quarter of its start-up.
  bool event_formats = true;
  // ftrace: user stacks from the instance's options/userstacktrace (the
  // kernel walks user frame pointers, at most 8 frames).
  bool user_stacks = false;
  // perf: how user stacks are taken (--call-graph); dwarf: the user
  // registers and stack copy instead of the user callchain.
  perf::CallGraph call_graph;
  // perf, user stacks by frame pointers: the probes are at functions' first
  // instructions (probe::Target::at_entry); each sample also carries the 8
  // bytes at the user stack pointer, the return address into the caller
  // (perf::request_stack_top, perf::with_entry_caller).
  bool entry_callers = false;
  // perf: each sample's user register ABI (perf::request_regs_abi), so that
  // a 32-bit task's samples can be told apart. Error at start when the
  // kernel cannot give it.
  bool regs_abi = false;
  // ftrace: events handed out in time order across CPUs (see
  // ftrace::Reader::set_time_ordered), for tools that pair a thread's events.
  bool time_ordered = false;
  // A filter (the kernel's event filter syntax) for every probe event; it
  // gates their stacks too. Joined with an event's own (TraceEvent::filter).
  std::string filter;
  // More filters for single events ("system:event" -> filter), joined with
  // the others (iosnoop -p: the start event only, not the completion).
  std::map<std::string, std::string> event_filters;
};

// Filters naming more threads than this are not set in the kernel.
inline constexpr size_t kMaxFilterThreads = 64;

// What the instance can do to follow a process's forks in the kernel: the
// pid list files and their fork options, for events and (when the probes
// include function-tracer functions) for the function tracer. Pure.
bool can_follow_forks(const std::function<bool(const std::string& rel)>& has, bool functions);

// The events lost, from the records the buffers refused (dropped), the
// events read without their stack (stackless: the buffer filled between
// an event and its stack, which was refused) and the records a refused
// event costs (FtraceCapture::records_per_refused_event): the drops count
// records, not events (254,591 for 127,295 events and one stack). Rounded
// up. Pure.
uint64_t lost_events(uint64_t dropped, uint64_t stackless, int records_per_event);

class FtraceCapture {
 public:
  // Error: the process of o.pid does not exist, or the kernel refused a
  // setting (the instance is removed again).
  static Result<FtraceCapture> start(const std::string& tracing_dir, const Probes& probes,
                                     const CaptureOptions& o);
  FtraceCapture(FtraceCapture&&) noexcept = default;
  FtraceCapture& operator=(FtraceCapture&&) = delete;
  // Members are destroyed reader first, then the instance (which disables
  // everything and removes itself).
  ~FtraceCapture() = default;

  // As ftrace::Reader::poll and flush, but with -p only the events of the
  // process's threads are handed out (some a pass late: see ThreadFilter),
  // and task:task_newtask records traced for that are not handed out
  // unless they are a probe's. Data and stack spans are valid during the
  // call only. progress as the reader's, but with -p it is called only at
  // the end of a pass (the filter hands out held events then).
  size_t poll(int timeout_ms, const ftrace::Reader::Callback& fn,
              const ftrace::Reader::Progress& progress = nullptr);
  size_t flush(const ftrace::Reader::Callback& fn,
               const ftrace::Reader::Progress& progress = nullptr);

  // False when -p could only name the threads that existed at the start
  // (this kernel's tracefs cannot follow forks): threads started later are
  // not traced. True without -p.
  bool follows_new_threads() const { return follows_; }

  // The records an event the full buffer refused costs in the drop counts
  // (ftrace::Reader::dropped): 2 where its stack is still tried (a
  // stacktrace trigger runs on the kernel's temp-buffer copy of a refused
  // event; the function tracer writes the stack on its own), 1 where the
  // stacktrace option only follows a written event or no stacks are taken.
  // Measured on 6.18: 400,000 events into a full buffer, 284,807 refused:
  // 569,615 drops with a trigger, 284,808 with the option (each plus the
  // one event written whose stack was refused).
  int records_per_refused_event() const { return records_per_refused_; }
  // The events lost so far: lost_events() of the reader's drops, its
  // events handed out without their stack, and records_per_refused_event().
  uint64_t lost_events() const;

  ftrace::Reader& reader() { return *reader_; }
  tracefs::Instance& instance() { return *instance_; }

 private:
  FtraceCapture() = default;
  // Feeds newtask records to the filter, the rest through it.
  void route(const ftrace::Event& e, const ftrace::Reader::Callback& fn);
  std::optional<tracefs::Instance> instance_;
  std::optional<ftrace::Reader> reader_;
  std::optional<ThreadFilter> filter_;
  std::optional<tracefs::EventFormat> newtask_;
  const tep_format_field* newtask_pid_ = nullptr;
  const tep_format_field* newtask_flags_ = nullptr;
  bool newtask_is_probe_ = false;
  bool follows_ = true;
  int records_per_refused_ = 1;
};

class PerfCapture {
 public:
  static constexpr uint64_t kSampleType = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                          PERF_SAMPLE_CALLCHAIN;
  // Error: the probes include function-tracer functions (perf cannot read
  // those), or perf_event_open failed.
  static Result<PerfCapture> start(const Probes& probes, const CaptureOptions& o,
                                   bool kernel_stacks, bool user_stacks);
  PerfCapture(PerfCapture&&) noexcept = default;
  PerfCapture& operator=(PerfCapture&&) = delete;

  perf::PerCpuEvents& events() { return *events_; }
  // The first event's attr: the one that asks for COMM/FORK/MMAP2 records
  // (perf::request_process_events), for perf::ProcessEvents. Decode
  // samples with its sample_type (kSampleType, plus PERF_SAMPLE_ID with -p,
  // and the user stack bits with --call-graph dwarf or entry_callers).
  const perf_event_attr& attr() const { return attr_; }
  // With -p: whether a sample is one to drop (an inherited copy of an event
  // its thread also has its own of; see perf/follow.hpp). Samples of child
  // processes are the caller's to drop, by s.pid.
  bool duplicate(const perf::Sample& s) const { return followed_.duplicate(s.tid, s.id); }

 private:
  PerfCapture() = default;
  std::optional<perf::PerCpuEvents> events_;
  perf_event_attr attr_{};
  perf::FollowedThreads followed_;
};

}  // namespace tracekit::session
