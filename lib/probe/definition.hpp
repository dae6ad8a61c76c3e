// perf-tools' probe definitions, as kprobe(8) and uprobe(8) take them: the
// kernel's kprobe_events / uprobe_events syntax with the probe name optional.
//
//   kprobe: {p|r}:[ALIAS ]FUNCTION[+OFFS] [FETCHARGS]
//     "p:do_sys_open", "p:myopen do_sys_open filename=+0(%si):string",
//     "r:do_sys_open $retval", "p:vfs_read+0x10"
//     A second word is the function (the first then the alias) unless it is
//     a fetch argument (it holds '=', '%' or '$'), as perf-tools decides.
//   uprobe: {p|r}:[ALIAS ]TARGET:SYMBOL[+OFFS] [FETCHARGS]
//     "p:bash:readline", "r:bash:readline +0($retval):string",
//     "p:libc:malloc size=%di:u64", "p:/bin/bash:0x8db60"
//     The first word is the probe unless it has no ':' (then it is the
//     alias, and the second word the probe). TARGET is a path (it holds a
//     '/'), or a program on PATH, or a library name ("libc").
//
// Parsing is pure; the tools resolve functions, targets and symbols.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "util/result.hpp"

namespace tracekit::probe {

struct Definition {
  bool is_return = false;
  std::string alias;      // the event name asked for; "" for the default
  std::string function;   // kprobe: the kernel function; uprobe: the symbol ("" for an address)
  uint64_t offset = 0;    // +OFFS after the function, or the address itself
  bool is_address = false;  // uprobe: TARGET:0xADDR
  std::string target;     // uprobe: as written ("bash", "libc", "/bin/bash")
  std::string fetchargs;  // the rest, as written (white space between args kept single)

  // The event name the probe gets: the alias, else the function (uprobe
  // addresses: "<target file name>_0x<addr>"), made a valid event name.
  std::string event_name() const;
};

Result<Definition> parse_kprobe_definition(std::string_view text);

// Fetch arguments as an older kernel takes them: without $argN (before 4.20)
// "$argN" becomes the register of the x86_64 calling convention (%di %si %dx
// %cx %r8 %r9: arguments 1 to 6), as perf-tools' users write them; without
// ustring (before 5.3) ":ustring" becomes ":string" and a "+u" user
// dereference a plain "+" (those kernels read user memory that way).
// Error: $argN past 6, or $argN on another architecture. Pure.
Result<std::string> adapt_fetchargs(std::string_view fetchargs, bool has_argn, bool has_ustring);
Result<Definition> parse_uprobe_definition(std::string_view text);

}  // namespace tracekit::probe
