// How this works: an Instance is a directory under instances/ that the kernel
// fills with a private copy of the ftrace control files and ring buffers.
// Every change made through Instance is written with write_control() and, if
// the kernel accepts it, the write that undoes it is pushed on undo_. The
// destructor replays undo_ backwards (each step may fail without stopping the
// rest; failures go to stderr with a "tracekit: cleanup:" prefix) and then
// removes the directory. Removing the directory alone would free most of it
// (Linux 6.18 accepts the rmdir with events, filters and triggers still set),
// but undoing first keeps the teardown right on kernels that refuse, and
// releases probe events enabled here in a known order.
//
//
// The control-file writes and error_log: control.cpp.

#include "tracefs/instance.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "feature_table/feature_table.hpp"
#include "util/exit_writes.hpp"
#include "util/fd.hpp"
#include "util/safe_file.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

std::string join_hint(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  return a + "; " + b;
}

// Adds a hint to an Error, keeping the kernel's explanation already there.
Error with_hint(Error e, const std::string& hint) {
  e.hint = join_hint(hint, e.hint);
  return e;
}

// Each process numbers its instances 0, 1, ...; a fork continues the count,
// which is harmless since the pid part differs.
std::atomic<int> g_next_instance{0};

}  // namespace

Instance::Instance(std::string top, std::string name, std::string path)
    : top_(std::move(top)),
      name_(std::move(name)),
      path_(std::move(path)),
      log_(path_, {path_, top_}) {}

Result<Instance> Instance::create(const std::string& tracing_dir) {
  const std::string instances = tracing_dir + "/instances";
  if (!exists(instances))
    return Error{ENOENT, "tracefs has no instances directory", instances,
                 "the kernel is too old (instances need Linux 3.10) or tracefs is not mounted"};
  // A name may already exist if a dead run had our pid: take the next one
  // (remove_leftovers() cannot tell that run from us).
  for (int tries = 0; tries < 1000; ++tries) {
    std::string name = "tracekit_" + std::to_string(getpid()) + "_" + std::to_string(g_next_instance++);
    Instance inst(tracing_dir, name, instances + "/" + name);
    note_write("mkdir " + inst.path_);
    if (mkdir(inst.path_.c_str(), 0755) == 0) {
      inst.owned_ = true;
      inst.exit_slot_ = add_exit_write(inst.path_ + "/tracing_on", "0");
      return inst;
    }
    if (errno != EEXIST)
      return Error::from_errno("cannot create a tracefs instance", inst.path_,
                               errno == EACCES || errno == EPERM ? "run as root" : "");
  }
  return Error{EEXIST, "cannot create a tracefs instance: every name is taken", instances,
               "run reset-tracing -f"};
}

Result<Instance> Instance::top_level(const std::string& tracing_dir, const std::string& lock_path) {
  auto guard = TopLevel::acquire(tracing_dir, lock_path);
  if (!guard) return guard.error();
  Instance inst(tracing_dir, "", tracing_dir);
  inst.guard_.emplace(std::move(*guard));
  inst.owned_ = true;
  // Killed before it undoes, this run leaves its changes to the next
  // holder of the lock (or reset-tracing) to undo.
  // Twice at most: a reset-tracing may remove the directory once empty.
  for (int attempt = 0;; ++attempt) {
    if (auto s = private_dir(journal_dir(lock_path)); !s)
      return Error{s.error().err, "cannot keep the undo journal: " + s.error().message,
                   s.error().path, s.error().hint};
    auto s = inst.log_.keep_journal(top_level_journal(lock_path, getpid()));
    if (s) break;
    if (s.error().err != ENOENT || attempt == 1) return s.error();
  }
  inst.exit_slot_ = add_exit_write(tracing_dir + "/tracing_on", "0");
  // What other users left in the buffer is not ours to read.
  if (auto s = inst.log_.write("trace", ""); !s) return s.error();
  return inst;
}

Instance::Instance(Instance&& o) noexcept
    : top_(std::move(o.top_)),
      name_(std::move(o.name_)),
      path_(std::move(o.path_)),
      log_(std::move(o.log_)),
      owned_(o.owned_),
      exit_slot_(o.exit_slot_),
      guard_(std::move(o.guard_)) {
  o.owned_ = false;
  o.exit_slot_ = -1;
  o.guard_.reset();
}

// From this many enabled events on, the teardown takes long enough (tens of
// milliseconds each under some kernels) to say so.
constexpr size_t kSlowTeardownEvents = 32;

Instance::~Instance() {
  if (!owned_) return;
  size_t events = log_.count_pushed("/enable");
  if (events >= kSlowTeardownEvents)
    std::cerr << program_invocation_short_name << ": detaching " << events
              << " events (Ctrl-C again to leave the rest to the next run)..." << std::endl;
  log_.undo();
  if (guard_) {
    // The top level stays; what we traced into its buffer goes, then the lock.
    if (auto s = log_.write("trace", ""); !s)
      std::cerr << "tracekit: cleanup: " << s.error().str() << "\n";
    remove_exit_write(exit_slot_);
    guard_.reset();
    return;
  }
  if (auto s = remove_dir(path_); !s) {
    Error e = s.error();
    e.message = "cannot remove tracefs instance";
    if (e.err == EBUSY)
      e.hint =
          "a file of it is still open (a reader not closed?); "
          "reset-tracing removes it once this process is gone";
    std::cerr << "tracekit: cleanup: " << e.str() << "\n";
  }
  remove_exit_write(exit_slot_);
}

Result<std::string> Instance::read(const std::string& rel) const { return log_.read(rel); }

Status Instance::set(const std::string& rel, const std::string& value) {
  return log_.set(rel, value);
}

namespace {

Error no_such_event(const std::string& path, const std::string& top, const std::string& system,
                    const std::string& event) {
  return Error{ENOENT, "no such event " + system + ":" + event, path,
               "see " + top + "/available_events"};
}

}  // namespace

Status Instance::enable_event(const std::string& system, const std::string& event) {
  const std::string dir = "events/" + system + "/" + event;
  if (!has(dir)) return no_such_event(path_ + "/" + dir, top_, system, event);
  return log_.change(dir + "/enable", "1", false, "0", false);
}

Status Instance::set_filter(const std::string& system, const std::string& event,
                            const std::string& filter) {
  const std::string dir = "events/" + system + "/" + event;
  if (!has(dir)) return no_such_event(path_ + "/" + dir, top_, system, event);
  // "0" clears a filter.
  auto s = log_.change(dir + "/filter", filter, false, "0", false);
  if (!s) return with_hint(s.error(), "bad filter? see the event's format file for fields");
  return {};
}

Status Instance::add_trigger(const std::string& system, const std::string& event,
                             const std::string& trigger) {
  const std::string dir = "events/" + system + "/" + event;
  if (!has(dir)) return no_such_event(path_ + "/" + dir, top_, system, event);
  std::string removal = trigger_removal(trigger);
  if (removal.empty()) return Error{EINVAL, "empty trigger for " + system + ":" + event, {}, {}};
  // Truncating the trigger file does not remove a stacktrace trigger: the
  // kernel wants "!command" appended.
  auto s = log_.change(dir + "/trigger", trigger, true, removal, true);
  if (!s) {
    if (s.error().err == EEXIST)
      return with_hint(s.error(), "a trigger of this kind is already set on the event");
    if (s.error().err == EINVAL || s.error().err == ENOENT)
      return with_hint(s.error(), "the kernel lists the triggers it knows in the trigger file");
    return s;
  }
  return {};
}

Status Instance::set_option(const std::string& option, bool on) {
  const std::string rel = "options/" + option;
  if (!has(rel))
    return Error{ENOENT, "no such trace option " + option, path_ + "/" + rel, "see trace_options"};
  return log_.set(rel, on ? "1" : "0");
}

Status Instance::set_buffer_size_kb(size_t kb) {
  // Not undone in an instance: the buffer goes away with it, and shrinking
  // it first would only cost time.
  auto s = guard_ ? log_.set("buffer_size_kb", std::to_string(kb))
                  : log_.write("buffer_size_kb", std::to_string(kb));
  if (!s && s.error().err == ENOMEM) return with_hint(s.error(), "ask for a smaller buffer");
  return s;
}

Status Instance::set_tracing_on(bool on) { return log_.set("tracing_on", on ? "1" : "0"); }

namespace {

// Says why the kernel refused a function tracer setting.
Error tracer_refused(Error e, const std::string& what, const std::string& config) {
  if (e.err == EPERM) {
    e.message = "the kernel refuses the " + what + ": " + e.message;
    e.hint = join_hint(
        "kernel lockdown or a security policy forbids function tracing here; "
        "trace a tracepoint or a uprobe instead",
        e.hint);
  } else if (e.err == ENOENT || e.err == ENODEV) {
    e.message = "this kernel has no " + what + ": " + e.message;
    e.hint = join_hint(config + " is off; trace a tracepoint instead", e.hint);
  }
  return e;
}

}  // namespace

Status Instance::set_tracer(const std::string& tracer) {
  const std::string what = tracer + " tracer";
  const std::string config = tracer == "function_graph" ? "CONFIG_FUNCTION_GRAPH_TRACER"
                             : tracer == "function"     ? "CONFIG_FUNCTION_TRACER"
                                                        : "the kernel option of the " + what;
  auto s = log_.change("current_tracer", tracer, false, "nop", false);
  if (s) return {};
  Error e = s.error();
  if (e.err == EINVAL) {
    // An unknown tracer: the kernel lists the ones it has.
    auto tracers = log_.read("available_tracers");
    e.message = "this kernel has no " + what + ": " + e.message;
    e.hint = join_hint(config + " is off" +
                           (tracers ? " (available_tracers: " + std::string(trim(*tracers)) + ")"
                                    : std::string()),
                       e.hint);
    return e;
  }
  return tracer_refused(e, what, config);
}

Status Instance::set_function_list(const std::string& rel,
                                   const std::vector<std::string>& functions) {
  if (functions.empty())
    return Error{EINVAL, "an empty function list", path_ + "/" + rel,
                 "an empty list means every function: name at least one"};
  std::string list;
  for (const auto& f : functions) list += (list.empty() ? "" : " ") + f;
  // Emptied by truncation at the end.
  auto s = log_.change(rel, list, false, "", false);
  if (s) return {};
  if (s.error().err == EINVAL)
    return with_hint(s.error(), "a function is not traceable (see available_filter_functions)");
  return tracer_refused(s.error(), "function tracer", "CONFIG_FUNCTION_TRACER");
}

Status Instance::set_ftrace_filter(const std::vector<std::string>& functions) {
  return set_function_list("set_ftrace_filter", functions);
}

Status Instance::set_graph_function(const std::vector<std::string>& functions) {
  if (!has("set_graph_function") && has("set_ftrace_filter"))
    return Error{ENOENT, "this kernel has no function_graph tracer", path_ + "/set_graph_function",
                 "CONFIG_FUNCTION_GRAPH_TRACER is off"};
  return set_function_list("set_graph_function", functions);
}

Status Instance::start_function_tracer(const std::vector<std::string>& functions,
                                       bool stack_trace) {
  if (functions.empty())
    return Error{EINVAL,
                 "the function tracer needs at least one function",
                 {},
                 "tracing every function with stacks would swamp the buffer"};
  if (auto s = set_ftrace_filter(functions); !s) return s;
  if (!stack_trace) return set_tracer("function");
  // Before Linux 5.12 an instance's function tracer takes func_stack_trace
  // only when the option changes while the tracer runs (function_trace_init
  // honoured it for the top level alone: 5.10 recorded no stacks here when
  // the option came first), and the option is one for every instance (a
  // write of the value it has does nothing). So the tracer first, with
  // tracing off, then the option (off first if another run has it on),
  // then tracing on: no call is recorded without its stack.
  if (auto s = set_tracing_on(false); !s) return s;
  if (auto s = set_tracer("function"); !s) return s;
  if (auto now = read("options/func_stack_trace"); now && trim(*now) == "1")
    if (auto o = set_option("func_stack_trace", false); !o) return o;
  if (auto o = set_option("func_stack_trace", true); !o) return o;
  return set_tracing_on(true);
}

bool Instance::has(const std::string& rel) const { return log_.has(rel); }

namespace {

std::string pid_list(const std::vector<int>& pids) {
  std::string list;
  for (int p : pids) list += (list.empty() ? "" : " ") + std::to_string(p);
  return list;
}

const char* pid_file(Instance::PidList list) {
  return list == Instance::PidList::kEvents ? "set_event_pid" : "set_ftrace_pid";
}

}  // namespace

Status Instance::set_pids(const std::string& rel, const std::vector<int>& pids) {
  // An empty write truncates: no pid filter.
  return log_.change(rel, pid_list(pids), false, "", false);
}

Status Instance::set_event_pid(const std::vector<int>& pids) {
  return set_pids(pid_file(PidList::kEvents), pids);
}

// The function tracer's pid list is refused as the tracer is (EPERM under
// lockdown), and said so: the first write a -p run makes of it.
Status Instance::set_ftrace_pid(const std::vector<int>& pids) {
  auto s = set_pids(pid_file(PidList::kFunctions), pids);
  if (!s) return tracer_refused(s.error(), "function tracer", "CONFIG_FUNCTION_TRACER");
  return s;
}

Status Instance::add_pids(PidList list, const std::vector<int>& pids) const {
  if (pids.empty()) return {};
  auto s = log_.append(pid_file(list), pid_list(pids));
  if (!s && list == PidList::kFunctions)
    return tracer_refused(s.error(), "function tracer", "CONFIG_FUNCTION_TRACER");
  return s;
}

Result<uint64_t> Instance::dropped_events(int cpu) const {
  const std::string rel = "per_cpu/cpu" + std::to_string(cpu) + "/stats";
  auto text = read(rel);
  if (!text) return text.error();
  auto n = parse_dropped_events(*text);
  if (!n) return Error{0, "no \"dropped events\" line in", path_ + "/" + rel, {}};
  return *n;
}

std::string trace_file_header(const std::string& trace_path) {
  std::string trace(8192, '\0');
  Fd fd(::open(trace_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return {};
  ssize_t n = ::read(fd.get(), trace.data(), trace.size());
  trace.resize(n > 0 ? static_cast<size_t>(n) : 0);
  std::string h;
  for (auto line : split(trace, '\n')) {
    if (line.empty() || line[0] != '#') break;
    h.append(line).push_back('\n');
  }
  return h;
}

}  // namespace tracekit::tracefs
