// kprobe: trace a kernel function with a kprobe and print its events
// (perf-tools' kprobe).
#include <cerrno>
#include <iostream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "family/events/tool.hpp"
#include "probe/definition.hpp"
#include "probe/spec.hpp"
#include "session/trace_session.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::tools {

namespace {

// Whether function is in available_filter_functions ("name" or "name
// [module]" lines); true when the kernel has no such file to ask.
bool traceable(const std::string& dir, const std::string& function) {
  auto text = read_file(dir + "/available_filter_functions");
  if (!text) return true;
  for (auto line : split(*text, '\n')) {
    auto name = line.substr(0, line.find(' '));
    if (name == function) return true;
  }
  return false;
}

}  // namespace

session::Outcome kprobe_main(int argc, char** argv) {
  events::ToolOptions o;
  o.ev.tool = "kprobe";
  o.ev.kernel_addresses = true;
  bool force = false;
  cli::Command cmd("kprobe", "[-FhHsv] [-d secs] [-p PID] [-L TID] kprobe_definition [filter]");
  cmd.flag("F", &force, "force: do not check the function against available_filter_functions");
  events::SharedOptions shared(cmd, o, "kprobe_definition",
                               "{p|r}:[alias] function[+offset] [fetchargs] (kprobetrace syntax)");
  cmd.example("kprobe p:do_sys_open", "trace open() entry")
      .example("kprobe r:do_sys_open", "trace open() return")
      .example("kprobe 'r:do_sys_open $retval'", "trace open() return value")
      .example("kprobe 'r:myopen do_sys_open $retval'", "use a custom probe name")
      .example("kprobe 'p:myopen do_sys_open mode=%cx:u16'", "trace the open() mode")
      .example("kprobe 'p:myopen do_sys_open filename=+0(%si):string'",
               "trace the open() file name")
      .example("kprobe 'p:vfs_read count=$arg3:u64'", "the third argument (Linux 4.20+)")
      .example("kprobe -p 489 p:sys_sync", "trace sys_sync() for PID 489 only")
      .example("kprobe 'p:do_sys_open file=+0(%si):string' 'file ~ \"*stat\"'",
               "opens of files ending in \"stat\"");
  if (auto code = cmd.parse(argc, argv)) return *code;
  if (auto code = shared.check()) return *code;
  auto def = probe::parse_kprobe_definition(o.definition);
  if (!def) return cmd.usage_error(def.error().str());

  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  if (!force && !traceable(*dir, def->function))
    return Error{0,
                                        "function " + def->function +
                                            " is not in available_filter_functions (not a "
                                            "function, inlined, or not traceable)",
                                        {},
                                        "check the name in /proc/kallsyms; -F probes it anyway"};

  probe::Target t;
  t.kind = def->is_return ? probe::Kind::kKernelReturn : probe::Kind::kKernel;
  t.function = def->function;
  if (def->offset) {
    char off[32];
    std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(def->offset));
    t.function += off;
  }
  t.event_name = def->event_name();
  t.fetchargs = def->fetchargs;
  auto trace =
      session::TraceSession::create(*dir, "kprobe", {t}, /*function_tracer=*/false, std::cerr);
  if (!trace) return trace.error();
  return events::view_or_trace(std::move(*trace), o, "kprobe " + t.event_name);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "kprobe",
    .summary = "trace a kernel function (kprobe) and print its events",
    .main = kprobe_main,
    .uses =
        {
            {"",
             {{"kprobes (dynamic_events) in a private instance",
               {F::kInstances, F::kKprobes, F::kDynamicEvents}},
              {"kprobes (kprobe_events) in a private instance", {F::kInstances, F::kKprobes}},
              {"kprobes (kprobe_events) at the top level (perf-tools' lock)", {F::kKprobes}}}},
            {"$argN",
             {{"the kernel's $argN", {F::kKprobes, F::kKprobeArgN}},
              {"rewritten to the x86_64 argument registers (1 to 6)", {F::kKprobes}}}},
            {":ustring",
             {{"the kernel's ustring", {F::kKprobes, F::kUstring}},
              {"rewritten to string (which reads user memory before 5.3)", {F::kKprobes}}}},
            {"refusals explained",
             {{"the kernel's error_log", {F::kErrorLog}}, {"errno only", {F::kKprobes}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
