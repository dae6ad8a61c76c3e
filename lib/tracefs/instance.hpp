// A private ftrace instance: instances/tracekit_<pid>_<n> under tracefs.
//
// Every run traces inside its own instance, so two runs (or a run and a user
// of the top-level trace) never disturb each other. Everything the instance
// was told to do (events enabled, filters, triggers, options, the function
// tracer) is undone when it is destroyed, in reverse order, each step logged
// on failure and the rest still attempted; then the instance is removed.
// Control-file writes that the kernel rejects carry the kernel's error_log
// line in the Error.
//
// Teardown order for callers: close readers of the instance's buffers first
// (an open trace_pipe_raw makes the rmdir fail with EBUSY), then destroy the
// Instance, then the ProbeGroup whose probes it enabled (a probe enabled in
// an instance cannot be removed: EBUSY).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracefs/top_level.hpp"
#include "tracefs/undo_log.hpp"
#include "util/result.hpp"

namespace tracekit::tracefs {

class Instance {
 public:
  // Creates instances/tracekit_<getpid()>_<n> (n counts up per process; a
  // name that exists already, left by a dead run that had our pid, is
  // skipped). Error: tracefs has no instances/ (hint: kernel too old) or
  // mkdir failed.
  static Result<Instance> create(const std::string& tracing_dir);
  // For kernels without instances (before 3.10, or TRACEKIT_KERNEL_FEATURES
  // =-instances): the top level itself, under perf-tools' lock
  // (tracefs/top_level.hpp, lock_path), used as an instance is. Its trace
  // buffer is emptied at the start and at the end; every setting, the
  // buffer size included, is restored at the end, and the lock removed.
  // Error: the lock is held by a live process (EBUSY, naming its PID).
  static Result<Instance> top_level(const std::string& tracing_dir,
                                    const std::string& lock_path = kFtraceLock);

  Instance(Instance&&) noexcept;
  Instance& operator=(Instance&&) = delete;
  Instance(const Instance&) = delete;
  // Undoes everything, in reverse order, and removes the instance; never
  // throws. A step that fails is reported on stderr ("tracekit: cleanup: ...")
  // and the rest is still done. With many events (each costs the kernel a
  // synchronisation) it says on stderr what it is doing first. Until then a
  // second Ctrl-C (cli/signals.hpp) may end the process: the instance's
  // tracing_on is set to 0 and the rest left to the next run's sweep.
  ~Instance();

  const std::string& tracing_dir() const { return top_; }
  const std::string& name() const { return name_; }  // "" for the top level
  // <tracing_dir>/instances/<name>, or tracing_dir for the top level.
  const std::string& path() const { return path_; }
  bool is_top_level() const { return guard_.has_value(); }

  // A file of the instance, relative to path().
  Result<std::string> read(const std::string& rel) const;

  // The generic undoable setter, for any control file that holds one value
  // (tracing_cpumask, trace_clock, buffer_percent, options/*, ...): the
  // value before is restored at the end (UndoLog::set). Error: errno, the
  // path, and the kernel's error_log line when it wrote one.
  Status set(const std::string& rel, const std::string& value);

  // Enables events/<system>/<event> in this instance (disabled again at the
  // end). Error: no such event (hint: available_events).
  Status enable_event(const std::string& system, const std::string& event);
  // Sets the event's filter (cleared at the end).
  Status set_filter(const std::string& system, const std::string& event, const std::string& filter);
  // Appends a trigger such as "stacktrace if common_pid == 42" to the
  // event's trigger file; removed at the end by appending "!" + trigger
  // without its filter (truncating the file does not remove a trigger).
  Status add_trigger(const std::string& system, const std::string& event,
                     const std::string& trigger);
  // options/<option> to 1 or 0 (restored at the end).
  Status set_option(const std::string& option, bool on);
  // buffer_size_kb (per CPU). Not undone in an instance (the buffer goes
  // with it); restored at the top level.
  Status set_buffer_size_kb(size_t kb);
  // tracing_on (restored at the end).
  Status set_tracing_on(bool on);

  // current_tracer ("function", "function_graph", "nop"; nop again at the
  // end). Error: the kernel refuses (EPERM under lockdown), or has no such
  // tracer (the message names the CONFIG option and the tracers it has).
  Status set_tracer(const std::string& tracer);
  // The functions the function tracers trace (set_ftrace_filter), and the
  // functions function_graph starts its graphs at (set_graph_function),
  // emptied again at the end. Error: functions is empty (EINVAL: an empty
  // list means every function), a function is not traceable (EINVAL), or
  // the kernel has no function tracer (ENOENT).
  Status set_ftrace_filter(const std::vector<std::string>& functions);
  Status set_graph_function(const std::vector<std::string>& functions);
  // The function tracer in this instance, restricted to functions, with a
  // kernel stack after every call when stack_trace
  // (options/func_stack_trace, switched on once the tracer runs: see the
  // .cpp). Errors as set_ftrace_filter and set_tracer.
  Status start_function_tracer(const std::vector<std::string>& functions, bool stack_trace);

  // Whether the instance has the control file or directory rel (a feature
  // probe: set_event_pid, options/event-fork, ...).
  bool has(const std::string& rel) const;
  // The pid lists: set_event_pid gates events, set_ftrace_pid the function
  // tracers. set_* replaces the list with pids (emptied at the end: opening
  // the file with O_TRUNC empties it); add_pids appends to one. Error: the
  // file is missing (set_event_pid came in Linux 4.4), or the kernel
  // refuses the list (EINVAL).
  enum class PidList { kEvents, kFunctions };
  Status set_event_pid(const std::vector<int>& pids);
  Status set_ftrace_pid(const std::vector<int>& pids);
  Status add_pids(PidList list, const std::vector<int>& pids) const;

  // "dropped events" of per_cpu/cpu<cpu>/stats (overwrite=0: events the
  // full buffer refused). Error: the file cannot be read or parsed.
  Result<uint64_t> dropped_events(int cpu) const;

 private:
  Instance(std::string top, std::string name, std::string path);
  Status set_pids(const std::string& rel, const std::vector<int>& pids);
  Status set_function_list(const std::string& rel, const std::vector<std::string>& functions);
  std::string top_, name_, path_;
  UndoLog log_;  // relative to path_
  bool owned_ = false;
  int exit_slot_ = -1;  // util/exit_writes: tracing_on 0 on an abrupt exit
  std::optional<TopLevel> guard_;  // the top level's lock, when used as one
};

// The most recent entry of <tracing_dir>/error_log (tracing_dir may be an
// instance's directory: each instance has an error_log of its own), as one
// line "trace_uprobe: error: ... (command: p:g/e ...)"; "" when there is none
// or the kernel has no error_log.
std::string last_error_log(const std::string& tracing_dir);

// The last entry of error_log text, formatted as last_error_log() does. Pure.
std::string parse_last_error_log(std::string_view error_log);

// Writes text to a tracefs control file in one write(2), truncating the file
// first (append false) or appending to it; a newline is added when text does
// not end with one, and an empty text only truncates. log_dirs are
// directories whose error_log the kernel may explain a failure in (an
// instance's own first, then the top level): on failure the Error carries
// errno, the path and, as its hint, the entry the write added to one of them.
Status write_control(const std::string& path, const std::string& text, bool append,
                     const std::vector<std::string>& log_dirs);

// rmdir(path), recorded like write_control() (removes an instance).
// Error: errno and the path.
Status remove_dir(const std::string& path);

// For tests: while set, every write_control(), and every mkdir/rmdir of an
// instance, is recorded in *log as "write <path> <text>", "append <path>
// <text>", "mkdir <path>" or "rmdir <path>" (text without the added newline),
// whether it succeeds or not. nullptr stops recording. Not thread-safe.
void record_writes(std::vector<std::string>* log);
// Records line in that log, if one is set (an instance's mkdir).
void note_write(const std::string& line);

// The command that removes a trigger, as an event's trigger file lists it or
// as it was written: "stacktrace:unlimited if common_pid == 5" ->
// "!stacktrace", "enable_event:sched:sched_wakeup:count=1" ->
// "!enable_event:sched:sched_wakeup", "hist:keys=pid:... [active]" ->
// "!hist:keys=pid:...". "" for blank and comment ("#") lines. Pure.
std::string trigger_removal(std::string_view trigger_line);

// The "#" lines a trace file starts with (its column header, as the current
// tracer prints it; from its first 8 KiB: the kernel formats the whole
// buffer for a full read), "" when it cannot be read.
std::string trace_file_header(const std::string& trace_path);

// The "dropped events: N" value of a per_cpu/cpuN/stats text. Pure.
std::optional<uint64_t> parse_dropped_events(std::string_view stats);

}  // namespace tracekit::tracefs
