#include "family/functions/tracer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "kernel/features.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/top_level.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/fd.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::functions {

namespace {

// Per-CPU buffer in buffered mode (as the event tools' -d).
constexpr size_t kBufferedKb = 8192;
// The longest a read waits for the pipe: polling trace_pipe wakes at
// buffer_percent on some kernels, so it is read on this schedule too.
constexpr int kPipePollMs = 100;

bool word_in(std::string_view text, std::string_view word) {
  for (auto w : split(text, ' '))
    if (trim(w) == word) return true;
  return false;
}

}  // namespace

Tracer::Tracer(const Options& o) : o_(o), filter_(o.headers, o.threshold_us && o.proc) {}

void Tracer::poll(int timeout_ms) {
  pollfd p{pipe_.get(), POLLIN, 0};
  (void)::poll(&p, 1, std::min(timeout_ms, kPipePollMs));  // EINTR: read anyway
  drain();
  print(std::cout);
}

void Tracer::stop() {
  (void)inst_->set_tracing_on(false);
  if (!o_.duration) drain();
}

void Tracer::report(std::ostream& out, std::ostream& err) {
  if (cli::stop_signal() != SIGPIPE && !cli::stdout_closed()) {
    if (o_.duration) read_trace_file(out);
    filter_.finish(pending_);
    print(out);
  }
  session::report_lost(err, dropped(), o_.duration.has_value());
}

// Reads what trace_pipe has now (non-blocking) into pending_.
void Tracer::drain() {
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(pipe_.get(), buf, sizeof buf);
    if (n > 0) {
      filter_.feed(std::string_view(buf, static_cast<size_t>(n)), pending_);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return;  // EAGAIN: empty for now; 0: tracing is off and all is read
  }
}

void Tracer::read_trace_file(std::ostream& out) {
  Fd fd(::open((inst_->path() + "/trace").c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) {
    std::cerr << o_.tool << ": cannot read " << inst_->path() << "/trace: " << std::strerror(errno)
              << "\n";
    return;
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    filter_.feed(std::string_view(buf, static_cast<size_t>(n)), pending_);
    if (pending_.size() > sizeof buf) print(out);
    if (!out) return;
  }
}

void Tracer::print(std::ostream& out) {
  if (pending_.empty()) return;
  if (out) out << pending_ << std::flush;
  pending_.clear();
}

uint64_t Tracer::dropped() const {
  uint64_t n = 0;
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator(inst_->path() + "/per_cpu", ec)) {
    const std::string name = d.path().filename();
    if (name.rfind("cpu", 0) != 0) continue;
    if (auto cpu = parse_int<int>(std::string_view(name).substr(3)))
      if (auto k = inst_->dropped_events(*cpu)) n += *k;
  }
  return n;
}

Status Tracer::set_shared(const std::string& rel, const std::string& value) {
  if (inst_->is_top_level() || inst_->has(rel)) return inst_->set(rel, value);
  if (!guard_) {
    auto g = tracefs::TopLevel::acquire(dir_, lock_path_);
    if (!g) return g.error();
    guard_.emplace(std::move(*g));
  }
  if (!guard_->has(rel))
    return Error{ENOENT, "this kernel has no " + rel, dir_ + "/" + rel, {}};
  return guard_->set(rel, value);
}

Status Tracer::set_option(const std::string& option, bool on, const std::string& flag) {
  auto s = set_shared("options/" + option, on ? "1" : "0");
  if (s) return s;
  Error e = s.error();
  e.message = "cannot set " + flag + " (" + (on ? "" : "no") + option + "): " + e.message;
  if (e.err == ENOENT)
    e.hint = "this kernel's " + std::string(o_.graph ? "function_graph" : "function") +
             " tracer has no " + option + " option, even while it is current (too old for it)";
  return e;
}

Result<std::unique_ptr<Tracer>> Tracer::start(const Options& o, const std::string& tracing_dir,
                                               bool instances, const std::string& lock_path) {
  std::unique_ptr<Tracer> t(new Tracer(o));
  if (auto s = t->setup(tracing_dir, instances, lock_path); !s) return s.error();
  return t;
}

Status Tracer::setup(const std::string& dir, bool instances, const std::string& lock_path) {
  dir_ = dir;
  lock_path_ = lock_path;
  const std::string tracer = o_.graph ? "function_graph" : "function";
  const bool pid_list = o_.pid || o_.tid;
  // Whether set_ftrace_pid is a pid list of each trace array (Linux 4.6:
  // set_ftrace_pid in every instance, function-fork from 4.13) rather than
  // a flag on the tasks (before): function_graph under tracing_thresh then
  // records every task's returns, the pid list unread (measured on 3.10
  // and 4.4: funcslower -p printed the 100 ms sleeps of other processes).
  bool pid_list_per_array = ::access((dir + "/options/function-fork").c_str(), F_OK) == 0;
  // Where the tracer may run: our own instance, when the kernel allows it
  // there (and, for -p and -L, the instance has a pid list of its own:
  // set_ftrace_pid came to instances in Linux 4.6); else the top level,
  // under the lock.
  if (instances) {
    auto inst = tracefs::Instance::create(dir);
    if (!inst) return inst.error();
    pid_list_per_array = pid_list_per_array || inst->has("set_ftrace_pid");
    auto tracers = inst->read("available_tracers");
    if (tracers && word_in(*tracers, tracer) &&
        (!o_.graph || inst->has("set_graph_function")) &&
        (!pid_list || inst->has("set_ftrace_pid")))
      inst_.emplace(std::move(*inst));
  }
  if (o_.threshold_us && pid_list && !pid_list_per_array)
    return Error{ENOTSUP,
                 std::string("cannot trace ") + (o_.pid ? "-p " : "-L ") +
                     "under tracing_thresh here: this kernel's function_graph records every "
                     "task's slow returns then (its set_ftrace_pid is a flag on the tasks, "
                     "which the threshold path does not read)",
                 {},
                 "set_ftrace_pid as a pid list of each instance, which the threshold path "
                 "reads, came in Linux 4.6; without -p/-L, -P names each call's task"};
  if (!inst_) {
    auto top = tracefs::Instance::top_level(dir, lock_path);
    if (!top) return top.error();
    inst_.emplace(std::move(*top));
    auto current = inst_->read("current_tracer");
    if (current && trim(*current) != "nop")
      return Error{EBUSY, "ftrace is in use: current_tracer is " + std::string(trim(*current)),
                   dir + "/current_tracer",
                   "another tool traces at the top level; reset-tracing -f resets it"};
  }

  // Tracing stays off until everything is set (changing current_tracer
  // empties the buffer anyway).
  if (auto s = inst_->set_tracing_on(false); !s) return s;
  if (auto s = inst_->set_option("overwrite", false); !s) return s;
  if (o_.duration)
    if (auto s = inst_->set_buffer_size_kb(kBufferedKb); !s) return s;

  if (o_.pid || o_.tid) {
    std::vector<int> tids;
    if (o_.pid) {
      tids = threads_of(*o_.pid);
      if (tids.empty()) return Error{ESRCH, "no process " + std::to_string(*o_.pid), {}, {}};
    } else {
      if (!process_exists(*o_.tid))
        return Error{ESRCH, "no thread " + std::to_string(*o_.tid), {}, {}};
      tids = {*o_.tid};
    }
    if (auto s = inst_->set_ftrace_pid(tids); !s) return s;
    // -p: the threads it starts later too (and the processes it starts:
    // the kernel's pid list follows every fork).
    if (o_.pid && inst_->has("options/function-fork"))
      if (auto s = inst_->set_option("function-fork", true); !s) return s;
  }

  // The kernel refuses a funcstring that matches no traceable function.
  auto no_match = [&](const Error& e, const std::string& file) {
    if (e.err != EINVAL) return e;
    return Error{EINVAL, "no traceable kernel function matches \"" + o_.functions + "\"",
                 inst_->path() + "/" + file, "the names are in available_filter_functions"};
  };
  const std::vector<std::string> functions{o_.functions};
  if (!o_.graph || o_.threshold_us)
    if (auto s = inst_->set_ftrace_filter(functions); !s)
      return no_match(s.error(), "set_ftrace_filter");
  if (o_.graph) {
    if (auto s = inst_->set_graph_function(functions); !s)
      return no_match(s.error(), "set_graph_function");
    if (o_.max_depth)
      if (auto s = set_shared("max_graph_depth", std::to_string(*o_.max_depth)); !s) {
        Error e = s.error();
        e.message = "cannot set -m " + std::to_string(*o_.max_depth) + ": " + e.message;
        if (e.err == ENOENT) e.hint = "max_graph_depth came in Linux 3.9";
        return e;
      }
    if (o_.threshold_us)
      if (auto s = set_shared("tracing_thresh", std::to_string(*o_.threshold_us)); !s) return s;
  }
  if (auto s = inst_->set_tracer(tracer); !s) return s;
  // The options after the tracer, as perf-tools sets them: before Linux 4.2
  // a tracer's own options (funcgraph-*) are in options/ only while it is
  // current_tracer (3.10: none before). Undone before the tracer, newest
  // first. Tracing is still off.
  if (o_.graph) {
    if (o_.on_cpu_only)
      if (auto s = set_option("sleep-time", false, "-C"); !s) return s;
    if (o_.abstime)
      if (auto s = set_option("funcgraph-abstime", true, "-t"); !s) return s;
    if (o_.proc)
      if (auto s = set_option("funcgraph-proc", true, "-P"); !s) return s;
    if (o_.tail)
      if (auto s = set_option("funcgraph-tail", true, "-T"); !s) return s;
    if (o_.no_duration)
      if (auto s = set_option("funcgraph-duration", false, "-D"); !s) return s;
  }

  if (!o_.duration) {
    pipe_ = Fd(::open((inst_->path() + "/trace_pipe").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!pipe_.valid())
      return Error{errno, "cannot open trace_pipe", inst_->path() + "/trace_pipe", {}};
  }
  return inst_->set_tracing_on(true);
}

std::string Tracer::header() const {
  return tracefs::trace_file_header(inst_->path() + "/trace");
}


bool LineFilter::keep(std::string_view line) const {
  if (!headers_ && !line.empty() && line[0] == '#') return false;
  if (!drop_switches_) return true;
  if (trim(line).empty() || line.rfind(" ---", 0) == 0) return false;
  // The third field: " 1)  comm-1  =>  comm-2" markers.
  size_t field = 0, i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i == line.size()) break;
    size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    if (++field == 3) return line.substr(i, j - i) != "=>";
    i = j;
  }
  return true;
}

namespace {

// A line of the kernel's trace text, with its control characters other
// than tabs (which the kernel's own columns use) printed as '?': a task's
// comm can hold ESC (prctl PR_SET_NAME), which must not reach the terminal.
void append_line(std::string& out, std::string_view line) {
  for (size_t tab; (tab = line.find('\t')) != std::string_view::npos;) {
    append_printable(out, line.substr(0, tab));
    out.push_back('\t');
    line.remove_prefix(tab + 1);
  }
  append_printable(out, line);
  out.push_back('\n');
}

}  // namespace

void LineFilter::feed(std::string_view text, std::string& out) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    if (nl == std::string_view::npos) {
      carry_.append(text);
      return;
    }
    std::string_view line = text.substr(0, nl);
    if (!carry_.empty()) {
      carry_.append(line);
      if (keep(carry_)) append_line(out, carry_);
      carry_.clear();
    } else if (keep(line)) {
      append_line(out, line);
    }
    text.remove_prefix(nl + 1);
  }
}

void LineFilter::finish(std::string& out) {
  if (!carry_.empty() && keep(carry_)) append_line(out, carry_);
  carry_.clear();
}

SharedOptions::SharedOptions(cli::Command& cmd, Options& o, Tool tool)
    : cmd_(cmd), o_(o), tool_(tool) {
  o.tool = cmd.name();
  o.graph = tool != Tool::kFunctrace;
  if (o.graph) {
    cmd.flag("a", &all_, "all info (same as -HPt)")
        .flag("C", &o.on_cpu_only, "measure on-CPU time only");
  }
  cmd.option("d", &secs_, "seconds", "trace duration, and use buffers");
  if (tool == Tool::kFuncgraph) cmd.flag("D", &o.no_duration, "do not show function duration");
  cmd.flag("H", &o.headers, "include column headers");
  if (tool == Tool::kFuncgraph) cmd.option("m", &max_depth_, "maxdepth", "max stack depth to show");
  cmd.option("p", &pid_, "PID", "trace when this pid is on-CPU (its threads, later ones too)")
      .option("L", &tid_, "TID", "trace when this thread is on-CPU");
  if (o.graph) {
    cmd.flag("P", &o.proc, "show process names & PIDs").flag("t", &o.abstime, "show timestamps");
  }
  if (tool == Tool::kFuncgraph) cmd.flag("T", &o.tail, "comment function tails");
  cmd.required("funcstring", &o.functions, "kernel function names, * globs allowed");
  if (tool == Tool::kFuncslower)
    cmd.required("latency_us", &latency_, "show calls slower than this, in microseconds");
}

std::optional<int> SharedOptions::check() {
  if (all_) o_.headers = o_.proc = o_.abstime = true;
  if (auto c = cmd_.positive_id("p", pid_, "PID", &o_.pid)) return c;
  if (auto c = cmd_.positive_id("L", tid_, "TID", &o_.tid)) return c;
  if (o_.pid && o_.tid) return cmd_.usage_error("use either -p or -L");
  if (auto c = cmd_.positive_seconds("d", secs_, &o_.duration)) return c;
  if (cmd_.given("m")) {
    if (max_depth_ <= 0) return cmd_.usage_error("-m needs a depth of 1 or more");
    o_.max_depth = max_depth_;
  }
  if (trim(o_.functions).empty()) return cmd_.usage_error("an empty funcstring");
  if (tool_ == Tool::kFuncslower) {
    auto us = parse_int<uint64_t>(latency_);
    if (!us || *us == 0)
      return cmd_.usage_error("latency_us '" + latency_ + "' is not a positive number");
    o_.threshold_us = *us;
  }
  return std::nullopt;
}

std::string header_line(const Options& o) {
  std::ostringstream h;
  h << "Tracing \"" << o.functions << "\"";
  if (o.pid) h << " for PID " << *o.pid;
  if (o.tid) h << " for TID " << *o.tid;
  if (o.threshold_us) h << " slower than " << *o.threshold_us << " us";
  if (o.duration)
    h << " for " << *o.duration << " seconds...\n";
  else
    h << "... Ctrl-C to end.\n";
  return h.str();
}

session::Outcome trace(const Options& o) {
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto& features = kernel::Features::host();
  const kernel::Feature needed =
      o.graph ? kernel::Feature::kFunctionGraph : kernel::Feature::kFunctionTracer;
  if (!features.has(needed)) return features.missing(needed);
  cli::sweep_leftovers(cli::Sweep::kMount);

  auto t = Tracer::start(o, *dir, features.has(kernel::Feature::kInstances));
  if (!t) return t.error();
  session::RunOptions r;
  r.header = header_line(o);
  if (o.headers && !o.duration) r.header += (*t)->header();
  r.duration = o.duration;
  r.buffered = o.duration.has_value();
  r.prints_events = true;
  r.after_report = "\nEnding tracing...\n";
  return session::started(std::move(t), r);
}

}  // namespace tracekit::functions
