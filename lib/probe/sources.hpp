// Parsers for the lists spec expansion reads: available_filter_functions,
// /proc/kallsyms and `ldconfig -p` output. Pure (text in, values out), so
// tests feed them text; the functions of spec.hpp do the reading.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit::probe {

// Function names of available_filter_functions text ("name" or
// "name [module]" per line), sorted and unique. Drops the placeholders the
// kernel lists for functions ftrace gave up on
// ("__ftrace_invalid_address___123").
std::vector<std::string> parse_filter_functions(std::string_view text);

// Names of the probeable text symbols (t/T/w/W) of kallsyms text, sorted
// and unique, without the module suffix. Leaves out, as bcc's
// get_kprobe_functions does, what no kprobe can attach to: init text
// (between _sinittext and _einittext, freed after boot), the irq entry text
// (between __irqentry_text_start and __irqentry_text_end), NOKPROBE markers
// (_kbl_addr_*), static call trampolines (__SCT__*) and gcc's split-off
// ".cold" parts. Also leaves out what is no function: padding labels
// (__pfx_*, __cfi_*), assembler locals (".slowpath"), the four range
// markers, and trampolines in pseudo-modules ([bpf], [__builtin__ftrace]).
// The ranges are found by address, so init and irq text are kept when
// addresses are hidden (all zero: kptr_restrict).
std::vector<std::string> parse_kallsyms_functions(std::string_view text);

// The path of library "lib<name>.so*" in `ldconfig -p` output:
//   "\tlibc.so.6 (libc6,x86-64, OS ABI: Linux 3.2.0) => /lib/x86_64-linux-gnu/libc.so.6"
// The first entry for this machine's ABI (arch, e.g. "x86-64") wins, else
// the first entry of any ABI. nullopt when no entry names the library.
std::optional<std::string> find_in_ldconfig(std::string_view text, std::string_view name,
                                            std::string_view arch);

}  // namespace tracekit::probe
