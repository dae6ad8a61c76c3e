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
// expressions (searched, like grep -E: anchor with ^ and $). Expansion lists
// what a spec names on this machine: kernel functions from
// available_filter_functions (or, where that cannot be read, the text
// symbols of /proc/kallsyms), tracepoints from events/, user functions from
// the ELF symbol tables of the file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::probe {

enum class Kind { kKernel, kKernelReturn, kTracepoint, kUser, kUserReturn, kUsdt };

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

struct Target {
  Kind kind = Kind::kKernel;
  std::string function;  // kernel function or user symbol
  std::string system;    // tracepoint system
  std::string event;     // tracepoint event
  std::string path;      // user probes: the resolved file
  uint64_t offset = 0;   // user probes: file offset of the function
};

struct ExpandOptions {
  bool regex = false;
  size_t max_probes = 1000;  // more matches than this is an error
  std::string tracing_dir;
};

// What spec names on this machine, sorted and without duplicates. Zero
// matches is not an error here (the tool prints bcc's message). Error: a
// regex that does not compile, a library that cannot be found, a file that
// is not ELF, more than max_probes matches (hint: narrow the pattern).
Result<std::vector<Target>> expand(const Spec& spec, const ExpandOptions& opts);

// Library resolution as bcc does it: "/..." as is (must exist); "c" ->
// libc; "name" -> libname.so* from the dynamic linker's cache (ldconfig -p)
// or the standard library directories; else a program named so on PATH.
Result<std::string> resolve_library(const std::string& lib);

struct ElfFunction {
  std::string name;
  uint64_t address = 0;      // st_value
  uint64_t file_offset = 0;  // what a uprobe takes: st_value mapped through the PT_LOAD segments
  uint64_t size = 0;
};
// Function symbols (.symtab, else .dynsym) of an ELF file, with file
// offsets. Error: cannot open, not ELF.
Result<std::vector<ElfFunction>> elf_functions(const std::string& path);

// Kernel functions that can be probed: available_filter_functions when
// readable, else the text symbols of /proc/kallsyms.
Result<std::vector<std::string>> kernel_functions(const std::string& tracing_dir);

// Glob match (fnmatch) or regex search of name against pattern.
bool matches(const std::string& pattern, const std::string& name, bool regex);

}  // namespace tracekit::probe
