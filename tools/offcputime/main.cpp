// offcputime: summarize off-CPU time by stack trace (bcc's offcputime).
#include <iostream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "offcputime/offcputime.hpp"
#include "perf/user_unwind.hpp"
#include "session/run.hpp"
#include "util/strings.hpp"

namespace tracekit::tools {

namespace {

std::optional<int> parse(int argc, char** argv, offcpu::Options& o) {
  int pid = 0, tid = 0;
  long stack_storage = static_cast<long>(o.stack_storage);
  long hash_storage = static_cast<long>(o.hash_storage);
  unsigned long min_us = o.min_us, max_us = 0;
  std::string state, call_graph;
  cli::Command cmd("offcputime",
                   "[-h] [-p PID | -t TID | -u | -k] [-U | -K] [-d] [-f] [-s] [-v]\n"
                   "[--stack-storage-size N] [--hash-storage-size N] [-m MIN_US] [-M MAX_US]\n"
                   "[--state STATE] [--call-graph fp|dwarf[,SIZE]] [-o FILE] [--format FORMAT]\n"
                   "[duration]");
  report::OutputArgs output;
  cmd.option("p,pid", &pid, "PID", "trace this PID only")
      .option("t,tid", &tid, "TID", "trace this TID only")
      .flag("u,user-threads-only", &o.user_threads_only, "user threads only (no kernel threads)")
      .flag("k,kernel-threads-only", &o.kernel_threads_only,
            "kernel threads only (no user threads)")
      .flag("U,user-stacks-only", &o.user_stacks_only, "show stacks from user space only")
      .flag("K,kernel-stacks-only", &o.kernel_stacks_only, "show stacks from kernel space only")
      .flag("d,delimited", &o.delimited, "insert delimiter between kernel/user stacks")
      .flag("f,folded", &o.folded, "output folded format")
      .flag("s,offset", &o.offsets, "show address offsets")
      .flag("v,verbose", &o.addresses, "show raw addresses")
      .option("stack-storage-size", &stack_storage, "N", "unique stacks kept (default 16384)")
      .option("hash-storage-size", &hash_storage, "N",
              "unique (thread, stacks) keys kept (default 40960)")
      .option("m,min-block-time", &min_us, "MIN_US",
              "count blocks of at least MIN_US microseconds (default 1)")
      .option("M,max-block-time", &max_us, "MAX_US",
              "count blocks of at most MAX_US microseconds (default: no limit)")
      .option("state", &state, "STATE",
              "only blocks that began in this state: 0 runnable (preempted), else a bit mask "
              "(1 S, 2 D, ...)")
      .option("call-graph", &call_graph, "MODE",
              "user stacks by fp (frame pointers, default) or dwarf[,SIZE] (unwind SIZE "
              "bytes of sampled stack, default 8192)");
  output.declare(cmd);
  cmd.positional("duration", &o.duration, "seconds to trace (default: until Ctrl-C)")
      .example("offcputime", "trace off-CPU stack time until Ctrl-C")
      .example("offcputime 5", "trace for 5 seconds only")
      .example("offcputime -f 5", "5 seconds, and output in folded format")
      .example("offcputime -m 1000", "trace only blocks of 1 ms or more")
      .example("offcputime -M 10000", "trace only blocks of 10 ms or less")
      .example("offcputime -p 185", "only trace threads of PID 185")
      .example("offcputime -t 188", "only trace thread 188")
      .example("offcputime -u", "only trace user threads (no kernel)")
      .example("offcputime -k", "only trace kernel threads (no user)")
      .example("offcputime -U", "only show user space stacks (no kernel)")
      .example("offcputime -K", "only show kernel space stacks (no user)")
      .example("offcputime --state 2", "only blocks in uninterruptible sleep (D)")
      .example("offcputime --call-graph dwarf -p 185", "whole user stacks without frame pointers")
      .example("offcputime -p 185 -o out.svg 10", "PID 185 for 10 s, and a flame graph of it");
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto code = output.resolve(cmd, argc, argv, &o.output)) return code;

  int filters = cmd.given("pid") + cmd.given("tid") + o.user_threads_only + o.kernel_threads_only;
  if (filters > 1) return cmd.usage_error("-p, -t, -u and -k cannot be combined");
  if (o.user_stacks_only && o.kernel_stacks_only)
    return cmd.usage_error("-U and -K cannot be combined");
  if (auto c = cmd.positive_id("pid", pid, "PID", &o.pid)) return *c;
  if (auto c = cmd.positive_id("tid", tid, "TID", &o.tid)) return *c;
  if (stack_storage <= 0 || hash_storage <= 0)
    return cmd.usage_error("storage sizes must be positive");
  o.stack_storage = static_cast<size_t>(stack_storage);
  o.hash_storage = static_cast<size_t>(hash_storage);
  o.min_us = min_us;
  if (cmd.given("max-block-time")) o.max_us = max_us;
  if (o.min_us > o.max_us)
    return cmd.usage_error("MIN_US (-m) must not be greater than MAX_US (-M)");
  if (cmd.given("state")) {
    auto v = parse_int<uint64_t>(state);
    if (!v) return cmd.usage_error("invalid state '" + state + "': a number is expected");
    o.state = *v;
  }
  if (cmd.given("call-graph")) {
    auto cg = perf::call_graph_option(call_graph, o.kernel_stacks_only);
    if (!cg) return cmd.usage_error(cg.error().str());
    o.call_graph = *cg;
  }
  if (o.duration && !(*o.duration > 0)) return cmd.usage_error("duration must be positive");
  return std::nullopt;
}

}  // namespace

session::Outcome offcputime_main(int argc, char** argv) {
  offcpu::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  cli::sweep_leftovers(cli::Sweep::kMount);
  auto tracer = offcpu::Tracer::start(o);
  if (!tracer) return tracer.error();
  auto r = session::summary(offcpu::header(o), o.folded);
  r.duration = o.duration;
  r.poll_ms = 100;
  return session::started(std::move(tracer), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "offcputime",
    .summary = "sum blocked (off-CPU) time by stack",
    .main = offcputime_main,
    .uses =
        {
            {"",
             {{"perf sched_switch samples, switch-ins from context-switch records",
               kernel::perf_stacks({F::kContextSwitch})},
              {"perf sched_switch samples, switch-ins from their next_pid "
               "(one the tracepoint misses: the first sched_wakeup)",
               kernel::perf_stacks()}}},
            {"--call-graph dwarf",
             {{"perf user registers and stack, unwound with libdw",
               kernel::perf_stacks({F::kUserStack})}}},
            {"event order",
             {{"CLOCK_MONOTONIC record times (use_clockid)", kernel::perf_stacks({F::kUseClockid})},
              {"perf's own clock, read from the records", kernel::perf_stacks()}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
