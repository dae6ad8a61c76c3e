// stackcount: count events (kernel/user functions, tracepoints) by stack.
#include <cerrno>
#include <iostream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "perf/user_unwind.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "stackcount/stackcount.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, stackcount::Options& o) {
  int pid = 0, cpu = -1;
  double interval = 0, duration = 0;
  std::string backend = "auto", call_graph;
  cli::Command cmd("stackcount",
                   "[-h] [-p PID] [-c CPU] [-i INTERVAL] [-D DURATION] [-T] [-r] [-s]\n"
                   "[-P] [-K] [-U] [-v] [-d] [-f] [--backend ftrace|perf]\n"
                   "[--call-graph fp|dwarf[,SIZE]] [-o FILE] [--format FORMAT] pattern");
  report::OutputArgs output;
  cmd.option("p,pid", &pid, "PID", "trace this PID only (filtered in the kernel)")
      .option("c,cpu", &cpu, "CPU", "trace this CPU only")
      .option("i,interval", &interval, "INTERVAL", "summary interval, seconds")
      .option("D,duration", &duration, "DURATION", "total duration of trace, seconds")
      .flag("T,timestamp", &o.timestamp, "include timestamp on output")
      .flag("r,regexp", &o.regex, "use regular expressions (default: * wildcards only)")
      .flag("s,offset", &o.offset, "show address offsets")
      .flag("P,perpid", &o.per_pid, "display stacks separately for each process")
      .flag("K,kernel-stacks-only", &o.kernel_only, "kernel stack only")
      .flag("U,user-stacks-only", &o.user_only, "user stack only")
      .flag("v,verbose", &o.verbose, "show raw addresses")
      .flag("d,delimited", &o.delimited, "insert delimiter between kernel/user stacks")
      .flag("f,folded", &o.folded, "output folded format")
      .option("backend", &backend, "NAME",
              "ftrace (kernel stacks, cheapest) or perf (kernel + user); default: ftrace with "
              "-K, else perf")
      .option("call-graph", &call_graph, "MODE",
              "perf: user stacks by fp (frame pointers, default) or dwarf[,SIZE] (unwind SIZE "
              "bytes of sampled stack, default 8192)");
  output.declare(cmd);
  cmd.required("pattern", &o.pattern,
               "func, p::func, t:cat:event, lib:func, /path:func (globs, or regex with -r)")
      .example("stackcount submit_bio", "count kernel stack traces for submit_bio")
      .example("stackcount -d ip_output", "include a user/kernel stack delimiter")
      .example("stackcount -s ip_output", "show symbol offsets")
      .example("stackcount -sv ip_output", "show offsets and raw addresses (verbose)")
      .example("stackcount 'tcp_send*'", "count stacks for funcs matching tcp_send*")
      .example("stackcount -r '^tcp_send.*'", "same as above, using regular expressions")
      .example("stackcount -Ti 5 ip_output", "output every 5 seconds, with timestamps")
      .example("stackcount -p 185 ip_output", "count ip_output stacks for PID 185 only")
      .example("stackcount -c 1 put_prev_entity", "count put_prev_entity stacks for CPU 1 only")
      .example("stackcount -p 185 c:malloc", "count stacks for malloc in PID 185")
      .example("stackcount t:sched:sched_fork", "count stacks for sched_fork tracepoint")
      .example("stackcount -K t:sched:sched_switch", "kernel stacks only")
      .example("stackcount -U t:sched:sched_switch", "user stacks only")
      .example("stackcount -P -o out.svg c:malloc", "a flame graph of malloc's callers");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto code = output.resolve(cmd, argc, argv, &o.output)) return code;

  if (o.kernel_only && o.user_only) return cmd.usage_error("-K and -U cannot be combined");
  if (auto c = cmd.positive_id("pid", pid, "PID", &o.pid)) return *c;
  if (cmd.given("cpu")) {
    if (cpu < 0) return cmd.usage_error("invalid CPU " + std::to_string(cpu));
    o.cpu = cpu;
  }
  if (cmd.given("interval")) {
    if (!(interval > 0)) return cmd.usage_error("interval must be positive");
    o.interval = interval;
  }
  if (cmd.given("duration")) {
    if (!(duration > 0)) return cmd.usage_error("duration must be positive");
    o.duration = duration;
  }
  if (backend == "ftrace")
    o.backend = session::Backend::kFtrace;
  else if (backend == "perf")
    o.backend = session::Backend::kPerf;
  else if (backend != "auto")
    return cmd.usage_error("unknown backend '" + backend + "': ftrace or perf");
  if (o.backend == session::Backend::kFtrace && o.user_only)
    return cmd.usage_error("user stacks (-U) need the perf backend");
  if (cmd.given("call-graph")) {
    auto cg = perf::call_graph_option(call_graph, o.kernel_only);
    if (!cg) return cmd.usage_error(cg.error().str());
    o.call_graph = *cg;
  }
  auto spec = probe::parse_spec(o.pattern);
  if (!spec) return cmd.usage_error(spec.error().str());
  if (auto ok = probe::check_patterns(*spec, o.regex); !ok)
    return cmd.usage_error(ok.error().str());
  return std::nullopt;
}

}  // namespace

session::Outcome stackcount_main(int argc, char** argv) {
  stackcount::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  auto counter = stackcount::Counter::start(o, std::cerr);
  if (!counter) return counter.error();
  auto r = session::summary("Tracing " + std::to_string(counter->traced()) + " functions for \"" +
                                o.pattern + "\"... Hit Ctrl-C to end.",
                            o.folded);
  if (!o.folded) r.after_report = "Detaching...\n";
  r.duration = o.duration;
  r.interval = o.interval;
  r.timestamp = o.timestamp;
  return session::started(std::move(counter), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "stackcount",
    .summary = "count events (functions, tracepoints) by stack",
    .main = stackcount_main,
    .uses =
        {
            {"tracepoints", kernel::tracepoint_stack_ways()},
            {"t:syscalls:*", kernel::syscall_event_ways()},
            {"kernel functions", kernel::kernel_function_stack_ways()},
            {"user functions (u:lib:func)",
             {{"uprobes read by perf", kernel::perf_stacks({F::kUprobes})}}},
            {"-U (user stacks)", {{"perf callchains", kernel::perf_stacks()}}},
            {"caller of a user function entry",
             {{"the return address at the user sp (8 bytes of stack)",
               kernel::perf_stacks({F::kUserStack})},
              {"frame-pointer callchains: the caller missing (said)", kernel::perf_stacks()}}},
            {"--call-graph dwarf",
             {{"perf user registers and stack, unwound with libdw",
               kernel::perf_stacks({F::kUserStack})}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
