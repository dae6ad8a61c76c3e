// A private ftrace instance: instances/tracekit_<pid>_<n> under tracefs.
//
// Every run traces inside its own instance, so two runs (or a run and a user
// of the top-level trace) never disturb each other. Everything the instance
// was told to do (events enabled, filters, triggers, options, the function
// tracer) is undone when it is destroyed, in reverse order, each step logged
// on failure and the rest still attempted; then the instance is removed.
// Control-file writes that the kernel rejects carry the kernel's error_log
// line in the Error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace tracekit::tracefs {

class Instance {
 public:
  // Creates instances/tracekit_<getpid()>_<n> (n counts up per process).
  // Error: tracefs has no instances/ (hint: kernel too old) or mkdir failed.
  static Result<Instance> create(const std::string& tracing_dir);

  Instance(Instance&&) noexcept;
  Instance& operator=(Instance&&) = delete;
  Instance(const Instance&) = delete;
  ~Instance();  // undoes everything and removes the instance; never throws

  const std::string& tracing_dir() const { return top_; }
  const std::string& name() const { return name_; }
  const std::string& path() const { return path_; }  // <tracing_dir>/instances/<name>

  // File access relative to path(). write() truncates, append() appends.
  // Error: errno, the path, and the kernel's error_log line when it wrote one.
  Status write(const std::string& rel, const std::string& text) const;
  Status append(const std::string& rel, const std::string& text) const;
  Result<std::string> read(const std::string& rel) const;

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
  // buffer_size_kb (per CPU).
  Status set_buffer_size_kb(size_t kb);
  // tracing_on.
  Status set_tracing_on(bool on);

  // The function tracer in this instance, restricted to functions
  // (set_ftrace_filter), with a kernel stack after every call when
  // stack_trace (options/func_stack_trace). Error: the kernel refuses
  // (EPERM under lockdown, ENODEV without CONFIG_FUNCTION_TRACER), or a
  // function is not traceable.
  Status start_function_tracer(const std::vector<std::string>& functions, bool stack_trace);

  // "dropped events" of per_cpu/cpu<cpu>/stats (overwrite=0: events the
  // full buffer refused). Error: the file cannot be read or parsed.
  Result<uint64_t> dropped_events(int cpu) const;

 private:
  Instance() = default;
  struct Undo {
    std::string rel;   // file, relative to path_
    std::string text;  // what to write
    bool append;
  };
  std::string top_, name_, path_;
  std::vector<Undo> undo_;
  bool owned_ = false;
};

// The most recent line(s) of <tracing_dir>/error_log, "" when there are none
// or the kernel has no error_log.
std::string last_error_log(const std::string& tracing_dir);

}  // namespace tracekit::tracefs
