// Event specifiers, as bcc's stackcount/funccount/trace take them:
//
//   func, p::func        kernel function entry
//   r::func              kernel function return
//   t:cat:event          tracepoint
//   lib:func, p:lib:func user function entry (uprobe); lib "c" is libc,
//   /path/bin:func       "/path" is taken as is, else a library name
//                        ("pthread" -> libpthread.so.0) or a program on PATH
//   r:lib:func           user function return
//   u:lib:probe          USDT probe (not supported yet: a clear error)
//
// func/event parts may be globs ('tcp_send*') or, with regex, regular
// expressions (RE2 syntax, searched like Python's re.search and grep -E:
// anchor with ^ and $). Expansion lists
// what a spec names on this machine: kernel functions from
// available_filter_functions (or, where that cannot be read, the text
// symbols of /proc/kallsyms), tracepoints from events/, user functions from
// the ELF symbol tables of the file.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::probe {

// kEventProbe: an eprobe on a tracepoint (system, event), made by tools
// (no spec names one).
enum class Kind { kKernel, kKernelReturn, kTracepoint, kUser, kUserReturn, kUsdt, kEventProbe };

struct Spec {
  Kind kind = Kind::kKernel;
  std::string library;  // user probes: as written ("c", "/bin/bash")
  std::string category; // tracepoints: system pattern ("sched", "sched*")
  std::string pattern;  // function or event pattern
  std::string text;     // the spec as written
};

// Parses a spec. Error (exit 2 material): malformed spec, e.g. "t:sched" or
// "x:foo:bar", naming what is wrong. u: specs parse (kind kUsdt); tools
// reject them with a clear message.
Result<Spec> parse_spec(std::string_view text);

// Compiles the patterns of spec (function or event, and a tracepoint's
// category) as expand() will, so that a tool can reject a bad one as a
// usage error before it sets anything up. Error: a pattern longer than
// kMaxPatternLength (probe/match.hpp), or a regex that does not compile.
Result<void> check_patterns(const Spec& spec, bool regex);

struct Target {
  Kind kind = Kind::kKernel;
  std::string function;  // kernel function or user symbol
  std::string system;    // tracepoint system (an event probe's: the attached one's)
  std::string event;     // tracepoint event
  std::string path;      // user probes: the resolved file
  uint64_t offset = 0;   // user probes: file offset of the function
  // User probes at a function's first instruction (a lib:func spec, not
  // r:, not past the entry): the function has not pushed its frame yet, so
  // a frame-pointer walk from there skips its caller (whose return address
  // is at the stack pointer). frame_entry: the instruction there is
  // push %rbp or endbr64 (entry_sets_frame()).
  bool at_entry = false;
  bool frame_entry = false;
  // Probes made from a definition (kprobe, uprobe): the event name wanted
  // and the fetch arguments, as the kernel takes them.
  std::string event_name;
  std::string fetchargs;
  // User probes: added to the event of an earlier target of the same kind
  // and event_name that has this set too (one event, several probes: its
  // fetchargs must have the same names and types), so that disabling the
  // event waits for one kernel synchronisation, not one per probe. Only
  // where kernel::Feature::kProbeAppend is found (an older kernel replaces
  // the event); a probe the kernel refuses to append gets its own event.
  bool shared_event = false;
  // syscalls:sys_enter_NAME / sys_exit_NAME on a kernel without syscall
  // tracepoints: the syscall number, traced as raw_syscalls with an id filter
  // (syscalls/raw.hpp); -1 otherwise.
  int syscall_nr = -1;
};

struct ExpandOptions {
  // The patterns are regular expressions, matched as bcc's -r does: from
  // the start of each name (re.match), a tracepoint's category whole.
  bool regex = false;
  size_t max_probes = 1000;  // more matches than this is an error
  std::string tracing_dir;   // "": tracefs::tracing_dir() (kernel and tracepoint specs)
  // Asked between names; true ends the expansion with an EINTR error.
  // Empty: cli::stop_requested(), so that Ctrl-C ends a long expansion.
  std::function<bool()> stopped;
  // Whether the kernel has syscalls:* tracepoints; nullopt: as
  // kernel::Feature::kSyscallTracepoints is probed, on tracing_dir. Without
  // them, syscalls:* specs match the syscalls libseccomp knows (targets with
  // syscall_nr set), and an exact name it does not know is an error.
  std::optional<bool> syscall_tracepoints;
};

// What spec names on this machine, sorted (functions by name, then offset;
// tracepoints by system, then event) and without duplicates: for user
// probes one target per file offset, named by the preferred alias (global
// over weak over local, then fewer leading underscores). Zero matches is
// not an error here (the tool prints bcc's message), except for a user
// spec on a file without .symtab, where the error says the file is
// stripped (and whether only .dynsym could be searched). Error: a u: spec
// ("USDT probes are not supported yet"), a pattern check_patterns rejects, a
// library that cannot be found, a file that is not ELF, more than
// max_probes matches (hint: narrow the pattern), stopped() turning true
// (err EINTR, "interrupted"); without syscall tracepoints, a
// "t:syscalls:sys_enter_NAME" (no wildcard) whose NAME libseccomp does not
// know (no errno; the message names it).
Result<std::vector<Target>> expand(const Spec& spec, const ExpandOptions& opts);

// Syscall tracepoint targets (syscalls:sys_enter_NAME, sys_exit_NAME) made
// raw_syscalls stand-ins (syscall_nr set, as expand() gives them on a
// kernel without syscall tracepoints: session::Probes traces them as one
// raw_syscalls:sys_enter and one sys_exit event with an id filter), when
// every target is a syscall tracepoint; those libseccomp has no number for
// (syscalls newer than it) are left tracepoints. Returns how many were
// made stand-ins. Pure but for syscalls/table.hpp.
size_t syscalls_through_raw(std::vector<Target>& targets);

// Library resolution as bcc does it: a name with a '/' is a path (must be
// a regular file; made absolute); "c" -> libc; "name" -> libname.so* from
// the dynamic linker's cache (ldconfig -p, this machine's ABI first) or the
// standard library directories; else a program named so on PATH. Error:
// none of these exists (hint: what to give instead).
Result<std::string> resolve_library(const std::string& lib);

struct ElfFunction {
  std::string name;          // without a symbol version ("memcpy", not "memcpy@@GLIBC_2.14")
  uint64_t address = 0;      // st_value
  uint64_t file_offset = 0;  // what a uprobe takes: st_value mapped through the PT_LOAD segments
  uint64_t size = 0;
  int binding = 0;     // STB_GLOBAL, STB_WEAK or STB_LOCAL (<elf.h>): ranks aliases
  bool ifunc = false;  // STT_GNU_IFUNC: the address is the resolver's, which runs once
};
struct ElfFunctions {
  std::vector<ElfFunction> functions;
  bool has_symtab = false;  // false: stripped; functions come from .dynsym (if any)
  bool has_dynsym = false;
};
// Defined function symbols (.symtab, else .dynsym) of an ELF file, with
// file offsets, in symbol table order; aliases (several names at one
// address) are all listed. Symbols in no PT_LOAD segment are left out: no
// uprobe can reach them. Which tables the file has comes along, so that
// zero matches on a stripped file can be told apart from a wrong name.
// Error: cannot open, not ELF.
Result<ElfFunctions> elf_symbols(const std::string& path);
// Why a name was not found in path when syms has no .symtab: "PATH has no
// symbol table (.symtab): it is stripped, so only ..." (the one wording of
// stackcount's, funccount's and uprobe's errors).
std::string stripped_reason(const std::string& path, const ElfFunctions& syms);
// elf_symbols(path)'s functions.
Result<std::vector<ElfFunction>> elf_functions(const std::string& path);

// Whether the instruction at offset in the file at path is push %rbp (0x55)
// or endbr64 (f3 0f 1e fa): where Linux 6.11 and later store the return
// address at the stack pointer as a uprobe's second user frame themselves
// (is_uprobe_at_func_entry() in perf_callchain_user, x86 only). False when
// the bytes cannot be read.
bool entry_sets_frame(const std::string& path, uint64_t offset);

// The error for a spec that matched nothing, as TOOLS.md words it: "0
// functions matched by "x". Exiting." ("0 tracepoints" for t: specs, as bcc
// calls them), ErrorKind::kNoMatch; tools print it as any error, prefixed
// with their name, on stderr, and exit 1. One message for every tool.
Error no_match_error(const Spec& spec);

// Kernel functions that can be probed, sorted and unique:
// available_filter_functions when readable, else the text symbols of
// kallsyms less what kprobes refuse (init text, NOKPROBE, ...; see
// probe/sources.hpp). Error: neither file can be read.
Result<std::vector<std::string>> kernel_functions(const std::string& tracing_dir,
                                                  const std::string& kallsyms = "/proc/kallsyms");

// Glob match (fnmatch, no flags) or regex search (RE2) of name
// against pattern. Compiles the pattern on every call: to match many names
// use Matcher (probe/match.hpp). A regex that does not compile matches
// nothing.
bool matches(const std::string& pattern, const std::string& name, bool regex);

}  // namespace tracekit::probe
