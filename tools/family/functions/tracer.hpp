// perf-tools' function tools that print the kernel's own tracer text:
// functrace (the function tracer on set_ftrace_filter), funcgraph
// (function_graph on set_graph_function, max_graph_depth, the funcgraph-*
// options) and funcslower (function_graph with tracing_thresh).
//
// Their output is not an event's print fmt but the tracer's own printer
// (function_graph's call graph, its duration column, its overhead marks,
// its tail comments, the context-switch markers): the kernel formats it and
// the options change it, so the text is read as the kernel writes it, from
// the trace_pipe of the run's instance (streaming) or, with -d, from its
// trace file once at the end (buffered, as perf-tools' -d), and printed as
// it is, less the "#" header lines unless -H.
//
// Where: the run's private instance when the kernel allows the tracer there
// (the function tracer since instances exist; function_graph only where the
// instance's available_tracers lists it, Linux 6.12 on), else the top level
// under perf-tools' lock (tracefs::Instance::top_level), refused when
// another tracer is current there. Settings that exist only at the top level
// (max_graph_depth, tracing_thresh, sleep-time and funcgraph-* options an
// instance lacks) go through the top-level guard (tracefs::TopLevel) and its
// lock. Everything is undone at the end.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "session/run.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/top_level.hpp"
#include "util/fd.hpp"
#include "util/result.hpp"
#include "session/entry.hpp"

namespace tracekit::functions {

struct Options {
  std::string tool;          // for messages: "funcgraph"
  bool graph = false;        // function_graph; else the function tracer
  std::string functions;     // the funcstring: kernel globs, as set_ftrace_filter takes them
  std::optional<int> pid;    // -p: the process's threads (and what they start)
  std::optional<int> tid;    // -L: this thread
  bool headers = false;      // -H: the trace file's header lines
  std::optional<double> duration;  // -d: buffered for this long, read once
  // function_graph:
  std::optional<int> max_depth;     // -m: max_graph_depth
  bool abstime = false;             // -t: funcgraph-abstime
  bool proc = false;                // -P: funcgraph-proc
  bool no_duration = false;         // -D: nofuncgraph-duration
  bool tail = false;                // -T: funcgraph-tail
  bool on_cpu_only = false;         // -C: nosleep-time
  // funcslower: tracing_thresh in microseconds; only the functions
  // themselves are traced (set_ftrace_filter too), and with -P the
  // context-switch markers are left out, as perf-tools' funcslower does.
  std::optional<uint64_t> threshold_us;
};

// Keeps the lines to print of the tracer's text, fed in chunks of any size:
// "#" header lines only with headers; with drop_switches also the
// context-switch markers (" ---..." lines, blank lines, "... => ..." lines
// whose third field is "=>"). Pure.
class LineFilter {
 public:
  LineFilter(bool headers, bool drop_switches) : headers_(headers), drop_switches_(drop_switches) {}
  // Appends the kept complete lines of text to out; keeps a partial last line.
  void feed(std::string_view text, std::string& out);
  // The partial last line, if kept (a text that does not end in a newline).
  void finish(std::string& out);
  bool keep(std::string_view line) const;

 private:
  bool headers_, drop_switches_;
  std::string carry_;
};

// "Tracing "FUNCS" for PID N slower than T us for S seconds..." and the
// like, perf-tools' first line. Pure.
std::string header_line(const Options& o);

// The options the three tools share, declared on cmd: -d -p -L -H and the
// funcstring; with graph, -a -C -P -t (and, unless slower, -D -T -m). check()
// validates them after cmd.parse() succeeded and fills o.
class SharedOptions {
 public:
  enum class Tool { kFunctrace, kFuncgraph, kFuncslower };
  SharedOptions(cli::Command& cmd, Options& o, Tool tool);
  // nullopt: go on; else the exit code of a usage error.
  std::optional<int> check();

 private:
  cli::Command& cmd_;
  Options& o_;
  Tool tool_;
  int pid_ = 0, tid_ = 0, max_depth_ = 0;
  double secs_ = 0;
  bool all_ = false;
  std::string latency_;
};

// The engine: the tracer set up and started, its text read and printed (on
// std::cout, as session::run reports).
class Tracer : public session::Engine {
 public:
  // Sets the tracer up in tracing_dir and starts it: in a private instance
  // when instances is true and the kernel allows the tracer there, else at
  // the top level under the lock at lock_path (which also guards the
  // top-level settings of an instance run). Error: a setting the kernel
  // refused (what undoes itself is undone), the lock held, another tracer
  // current at the top level, no such process.
  static Result<std::unique_ptr<Tracer>> start(const Options& o, const std::string& tracing_dir,
                                               bool instances,
                                               const std::string& lock_path = tracefs::kFtraceLock);
  ~Tracer() override = default;

  // The trace file's "#" lines as the tracer prints them now (-H).
  std::string header() const;
  // Where it traces: the instance's directory, or the top level's.
  const std::string& path() const { return inst_->path(); }

  void poll(int timeout_ms) override;
  void stop() override;
  void report(std::ostream& out, std::ostream& err) override;

 private:
  explicit Tracer(const Options& o);
  Status setup(const std::string& dir, bool instances, const std::string& lock_path);
  // A setting that may exist only at the top level: the instance's own when
  // it has the file, else through the top-level guard (taken on first use).
  Status set_shared(const std::string& rel, const std::string& value);
  Status set_option(const std::string& option, bool on, const std::string& flag);
  void drain();
  void read_trace_file(std::ostream& out);
  void print(std::ostream& out);
  uint64_t dropped() const;

  Options o_;
  LineFilter filter_;
  std::string pending_;
  std::string dir_, lock_path_;
  // Destroyed in reverse: the pipe first (an open trace_pipe keeps the
  // instance busy), then the instance (the tracer off, its settings
  // undone), then the top-level settings and the lock.
  std::optional<tracefs::TopLevel> guard_;
  std::optional<tracefs::Instance> inst_;
  Fd pipe_;
};

// Checks the kernel has what o needs and sets the tracer up, for
// session::finish to run (session/entry.hpp): the header, the text,
// "Ending tracing...".
session::Outcome trace(const Options& o);

}  // namespace tracekit::functions
