// profile: sample on-CPU stack traces at a timed interval (bcc's profile).
#include <iostream>
#include <string>
#include <string_view>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "perf/user_unwind.hpp"
#include "profile/profiler.hpp"
#include "session/run.hpp"
#include "util/strings.hpp"

namespace tracekit::tools {

namespace {

// Parses and validates the command line into o. nullopt: go on; else the
// exit code (help printed, or a usage error reported).
std::optional<int> parse(int argc, char** argv, profile::Options& o) {
  std::string pids, tids;
  unsigned long count = 0;
  long stack_storage = static_cast<long>(o.stack_storage);
  long hash_storage = static_cast<long>(o.hash_storage);
  int cpu = -1;
  std::string call_graph;
  cli::Command cmd("profile",
                   "[-h] [-p PID[,PID..] | -L TID[,TID..]] [-U | -K] [-F HZ | -c COUNT]\n"
                   "[-d] [-a] [-I] [-f] [--stack-storage-size N] [--hash-storage-size N]\n"
                   "[-C CPU] [--call-graph fp|dwarf[,SIZE]] [-o FILE] [--format FORMAT]\n"
                   "[duration]");
  report::OutputArgs output;
  cmd.option("p,pid", &pids, "PID", "profile these processes only (comma separated)")
      .option("L,tid", &tids, "TID", "profile these threads only (comma separated)")
      .flag("U,user-stacks-only", &o.user_only, "show user space stacks only")
      .flag("K,kernel-stacks-only", &o.kernel_only, "show kernel space stacks only")
      .option("F,frequency", &o.frequency, "HZ", "sample frequency, Hertz (default 49)")
      .option("c,count", &count, "COUNT", "sample period, every COUNT ns of CPU time")
      .flag("d,delimited", &o.delimited, "insert delimiter between kernel/user stacks")
      .flag("a,annotations", &o.annotate, "add _[k] annotations to kernel frames")
      .flag("I,include-idle", &o.include_idle, "include CPU idle stacks")
      .flag("f,folded", &o.folded, "output folded format, one line per stack")
      .option("stack-storage-size", &stack_storage, "N", "unique stacks kept (default 16384)")
      .option("hash-storage-size", &hash_storage, "N",
              "unique (process, stacks) keys kept (default 40960)")
      .option("C,cpu", &cpu, "CPU", "sample this CPU only")
      .option("call-graph", &call_graph, "MODE",
              "user stacks by fp (frame pointers, default) or dwarf[,SIZE] (unwind SIZE "
              "bytes of sampled stack, default 8192)");
  output.declare(cmd);
  cmd.positional("duration", &o.duration, "seconds to profile (default: until Ctrl-C)")
      .example("profile", "profile stack traces at 49 Hertz until Ctrl-C")
      .example("profile -F 99", "profile stack traces at 99 Hertz")
      .example("profile -c 1000000", "profile stack traces every 1 ms of CPU time")
      .example("profile 5", "profile at 49 Hertz for 5 seconds only")
      .example("profile -f 5 > out.folded", "folded output for flame graphs, 5 seconds")
      .example("profile -df -p 185 10", "PID 185, folded, kernel/user delimited")
      .example("profile -L 185", "only profile thread with TID 185")
      .example("profile -U", "only show user space stacks (no kernel)")
      .example("profile -K -C 1", "only kernel stacks, on CPU 1 only")
      .example("profile --call-graph dwarf -p 185", "whole user stacks without frame pointers")
      .example("profile -F 99 -o out.svg 10", "a flame graph of 10 seconds, besides the report")
      .example("profile -o out.pb.gz -o out.folded 10", "a pprof profile and folded stacks");
  // bcc's --cgroupmap and --mntnsmap name a pinned BPF map (of cgroup IDs,
  // of mount namespaces) that its BPF program filters by: there is no such
  // map without BPF. Said so, rather than "unrecognised option".
  for (int i = 1; i < argc && std::string_view(argv[i]) != "--"; ++i) {
    std::string_view a = argv[i];
    for (std::string_view bpf : {"--cgroupmap", "--mntnsmap"})
      if (a == bpf ||
          (a.size() > bpf.size() && a.substr(0, bpf.size() + 1) == std::string(bpf) + "="))
        return cmd.usage_error(std::string(bpf) +
                               " takes a pinned BPF map (bcc's); tracekit uses no BPF: "
                               "choose the processes with -p PID or the threads with -L TID");
  }
  if (auto code = cmd.parse(argc, argv)) return code;
  if (auto code = output.resolve(cmd, argc, argv, &o.output)) return code;

  if (cmd.given("pid") && cmd.given("tid")) return cmd.usage_error("-p and -L cannot be combined");
  if (o.user_only && o.kernel_only) return cmd.usage_error("-U and -K cannot be combined");
  if (cmd.given("frequency") && cmd.given("count"))
    return cmd.usage_error("-F and -c cannot be combined");
  if (cmd.given("pid")) {
    auto ids = parse_id_list(pids);
    if (!ids) return cmd.usage_error("invalid PID list '" + pids + "'");
    o.pids = *ids;
  }
  if (cmd.given("tid")) {
    auto ids = parse_id_list(tids);
    if (!ids) return cmd.usage_error("invalid TID list '" + tids + "'");
    o.tids = *ids;
  }
  if (o.frequency <= 0) return cmd.usage_error("frequency must be a positive number of Hertz");
  if (cmd.given("count")) {
    if (count == 0) return cmd.usage_error("count must be positive");
    o.count = count;
  }
  if (stack_storage <= 0 || hash_storage <= 0)
    return cmd.usage_error("storage sizes must be positive");
  o.stack_storage = static_cast<size_t>(stack_storage);
  o.hash_storage = static_cast<size_t>(hash_storage);
  if (cmd.given("cpu")) {
    if (cpu < 0) return cmd.usage_error("CPU must be a CPU number");
    o.cpu = cpu;
  }
  if (cmd.given("call-graph")) {
    auto cg = perf::call_graph_option(call_graph, o.kernel_only);
    if (!cg) return cmd.usage_error(cg.error().str());
    o.call_graph = *cg;
  }
  if (o.duration && !(*o.duration > 0)) return cmd.usage_error("duration must be positive");
  return std::nullopt;
}

}  // namespace

session::Outcome profile_main(int argc, char** argv) {
  profile::Options o;
  if (auto code = parse(argc, argv, o)) return *code;

  cli::sweep_leftovers(cli::Sweep::kIfMounted);
  auto profiler = profile::Profiler::start(o, cli::stop_requested);
  if (!profiler) return profiler.error();
  auto r = session::summary(profile::header(o), o.folded);
  r.duration = o.duration;
  r.poll_ms = 250;
  return session::started(std::move(profiler), r);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "profile",
    .summary = "sample on-CPU stacks at a timed interval",
    .main = profile_main,
    .uses =
        {
            {"", {{"perf cpu-clock sampling with callchains", kernel::perf_stacks()}}},
            {"-U / -K",
             {{"perf callchains of one side", kernel::perf_stacks({F::kExcludeCallchain})},
              {"perf callchains of both sides, one dropped", kernel::perf_stacks()}}},
            {"--call-graph dwarf",
             {{"perf user registers and stack, unwound with libdw",
               kernel::perf_stacks({F::kUserStack})}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
