// uprobe: trace a user-level function with a uprobe and print its events
// (perf-tools' uprobe).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <iostream>
#include <set>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "session/entry.hpp"
#include "session/tool_table.hpp"
#include "family/events/tool.hpp"
#include "kernel/features.hpp"
#include "probe/definition.hpp"
#include "probe/spec.hpp"
#include "session/trace_session.hpp"
#include "tracefs/tracing_dir.hpp"

namespace tracekit::tools {

namespace {

// A program (PATH), a library ("libc", "c", "pthread") or a path.
Result<std::string> resolve_target(const std::string& target) {
  auto path = probe::resolve_library(target);
  if (!path && target.rfind("lib", 0) == 0 && target.size() > 3 &&
      target.find('/') == std::string::npos)
    if (auto bare = probe::resolve_library(target.substr(3))) return *bare;
  return path;
}

// -l: the target's function names, sorted, once each.
session::Outcome list(const std::string& target) {
  auto path = resolve_target(target);
  if (!path) return path.error();
  auto syms = probe::elf_symbols(*path);
  if (!syms) return syms.error();
  std::set<std::string> names;
  for (const auto& f : syms->functions) names.insert(f.name);
  for (const auto& n : names) std::cout << n << "\n";
  if (names.empty()) std::cerr << "uprobe: " << *path << " has no function symbols (stripped?)\n";
  return cli::kExitOk;
}

// Where a definition probes: the file offset of its symbol (+ offset) or
// address in path, and whether that is a function's first instruction.
struct Place {
  uint64_t offset = 0;
  bool entry = false;
};

Result<Place> place_of(const probe::Definition& d, const std::string& path) {
  using probe::stripped_reason;
  auto syms = probe::elf_symbols(path);
  if (!syms) return syms.error();
  if (d.is_address) {
    auto starts = [&](const auto& f) { return f.address == d.offset; };
    const bool entry = std::any_of(syms->functions.begin(), syms->functions.end(), starts);
    for (const auto& f : syms->functions)
      if (d.offset >= f.address && d.offset < f.address + std::max<uint64_t>(f.size, 1))
        return Place{f.file_offset + (d.offset - f.address), entry};
    char a[32];
    std::snprintf(a, sizeof a, "0x%llx", static_cast<unsigned long long>(d.offset));
    return Error{0,
                 std::string("address ") + a + " is in no function of " + path,
                 {},
                 "list the functions with uprobe -l " + path};
  }
  for (const auto& f : syms->functions)
    if (f.name == d.function) {
      if (d.offset && f.size && d.offset >= f.size)
        return Error{EINVAL, "offset beyond the end of " + d.function, path, {}};
      return Place{f.file_offset + d.offset, d.offset == 0};
    }
  // Not a system error: no errno (strerror's "No such file or directory"
  // read as if the file were missing). A stripped file is said to be one,
  // in stackcount's words: the function may well be there, unseen.
  if (!syms->has_symtab)
    return Error{0,
                 "no function " + d.function + " in " + path + ": " + stripped_reason(path, *syms),
                 {},
                 "probe an unstripped build of it, or give an address: p:" + path + ":0xADDR"};
  return Error{
      0, "no function " + d.function + " in " + path, {}, "list them with uprobe -l " + path};
}

// The probe of a definition: its target file and the symbol's file offset;
// entry: whether it is at a function's first instruction (an entry probe).
Result<probe::Target> probe_target(const probe::Definition& def, bool& entry) {
  auto path = resolve_target(def.target);
  if (!path) return path.error();
  auto place = place_of(def, *path);
  if (!place) return place.error();
  entry = place->entry && !def.is_return;
  probe::Target t;
  t.kind = def.is_return ? probe::Kind::kUserReturn : probe::Kind::kUser;
  t.function = def.function;
  t.path = *path;
  t.offset = place->offset;
  t.event_name = def.event_name();
  t.fetchargs = def.fetchargs;
  return t;
}

// The fetch argument that -s adds to an entry probe: the return address at
// the stack pointer (x86_64: the call pushed it there), the caller that the
// kernel's frame-pointer walk skips (the probed function has not pushed its
// frame yet). The printer takes it as the user stack's second frame.
constexpr const char* kCallerField = "__tracekit_caller";

// -s at an entry probe: adds the caller's fetch argument to t, or says on
// stderr why its stacks miss the caller.
void add_caller(probe::Target& t, events::Options& ev) {
#if defined(__x86_64__)
  constexpr kernel::Feature f = kernel::Feature::kUprobeFetchArgs;
  if (kernel::Features::host().has(f)) {
    t.fetchargs += std::string(t.fetchargs.empty() ? "" : " ") + kCallerField + "=+0(%sp):x64";
    ev.caller_field = kCallerField;
    return;
  }
  std::cerr << "uprobe: user stacks miss the caller of " << t.event_name
            << " (their second frame): " << kernel::missing_error(f, kernel::forced_off(f)).str()
            << "\n";
#else
  std::cerr << "uprobe: user stacks miss the caller of " << t.event_name
            << " (their second frame): its return address is read on x86_64 only\n";
#endif
}

}  // namespace

session::Outcome uprobe_main(int argc, char** argv) {
  events::ToolOptions o;
  o.ev.tool = "uprobe";
  o.ev.user_addresses = true;
  std::string list_target;
  cli::Command cmd("uprobe",
                   "[-hHsv] [-d secs] [-p PID] [-L TID] {-l target |\n"
                   "uprobe_definition [filter]}");
  events::SharedOptions shared(cmd, o, "uprobe_definition",
                               "{p|r}:[alias ]target:symbol[+offset] [fetchargs] (uprobetrace)",
                               events::SharedOptions::Stacks::kUser);
  cmd.option("l", &list_target, "target", "list functions from this executable or library")
      .example("uprobe p:bash:readline", "trace readline() calls in all running bash")
      .example("uprobe p:/bin/bash:readline", "... with an explicit executable path")
      .example("uprobe 'r:bash:readline +0($retval):string'", "readline()'s return, as a string")
      .example("uprobe p:libc:sleep", "sleep() calls in all running libc")
      .example("uprobe 'p:libc:sleep %di'", "sleep() with register %di (x86)")
      .example("uprobe 'p:libc:malloc size=%di:u64'", "malloc() sizes")
      .example("uprobe p:libc:0xbf130", "this address (it must start an instruction)")
      .example("uprobe -p 1182 p:libc:gettimeofday", "PID 1182 only")
      .example("uprobe 'r:libc:fopen file=$retval' 'file == 0'", "fopen() returning NULL")
      .example("uprobe -s p:bash:readline", "... with user stack traces")
      .example("uprobe -l bash", "list bash's functions");
  if (auto code = cmd.parse(argc, argv)) return *code;
  const bool listing = cmd.given("l");
  if (auto code = shared.check(!listing)) return *code;
  if (listing) {
    if (shared.definition_given() || cmd.given("d") || o.ev.pid || o.ev.tid || o.view ||
        o.ev.headers || o.ev.user_stacks)
      return cmd.usage_error("-l takes a target only");
    return list(list_target);
  }
  auto def = probe::parse_uprobe_definition(o.definition);
  if (!def) return cmd.usage_error(def.error().str());

  bool entry = false;
  auto t = probe_target(*def, entry);
  if (!t) return t.error();
  const std::string fetchargs = t->fetchargs;  // as the header shows them
  if (o.ev.user_stacks && entry) add_caller(*t, o.ev);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto trace =
      session::TraceSession::create(*dir, "uprobe", {*t}, /*function_tracer=*/false, std::cerr);
  if (!trace) {
    Error e = trace.error();
    // Kernels before 3.14 take registers only as a uprobe's arguments
    // (measured on 3.10: "r:... $retval" was EINVAL, "p:... %di" taken); the
    // kernel says nothing (no error_log) and the error is otherwise bare.
    if (e.err == EINVAL && fetchargs.find_first_of("$+@") != std::string::npos)
      e.hint =
          "this kernel may take only registers (%ax, %di, ...) as uprobe arguments: "
          "$retval, $stack, @addresses and +offset(...) memory came to uprobe_events in "
          "Linux 3.14 (a return value is %ax on x86-64)";
    return e;
  }
  char where[64];
  std::snprintf(where, sizeof where, ":0x%llx", static_cast<unsigned long long>(t->offset));
  std::string detail = std::string(def->is_return ? "r:" : "p:") + t->event_name + " " + t->path +
                       where + (fetchargs.empty() ? "" : " " + fetchargs);
  return events::view_or_trace(std::move(*trace), o, "uprobe " + t->event_name, detail);
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): its name, summary, entry
// point and backends.
namespace tracekit::tools {
namespace {
using F = kernel::Feature;
const session::RegisterTool kTool{{
    .name = "uprobe",
    .summary = "trace a user function (uprobe) and print its events",
    .main = uprobe_main,
    .uses =
        {
            {"",
             {{"uprobes (dynamic_events) in a private instance",
               {F::kInstances, F::kUprobes, F::kDynamicEvents}},
              {"uprobes (uprobe_events) in a private instance",
               {F::kInstances, F::kInstanceOptions, F::kUprobes}},
              {"uprobes (uprobe_events) at the top level (perf-tools' lock)", {F::kUprobes}}}},
            {"-s", {{"the userstacktrace option", {F::kUprobes}}}},
        },
}};
}  // namespace
}  // namespace tracekit::tools
