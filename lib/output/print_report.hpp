// The end of a stack tool's report: the report model (report/) merged,
// sorted and rendered to stdout, its warnings, and the -o files written
// from the same report.
#pragma once

#include <ostream>

#include "aggregate/stack_counts.hpp"
#include "report/stack_records.hpp"
#include "symbols/user.hpp"

namespace tracekit::output {

// The end of a stack tool's run (or interval): resolves every key's stacks,
// merges records that print the same, sorts them by value and prints them to
// out, and writes the -o files (opts.output) from the same report; warnings
// (symbols unavailable, stacks or keys that did not fit their tables) and the
// files' "wrote" lines go to err. build_report(), then print_report().
void print_stack_report(std::ostream& out, std::ostream& err, const aggregate::StackCounts& counts,
                        symbols::UserSymbols* user_syms, const report::PrintOptions& opts);

// The printing half of print_stack_report(), for a report built with
// build_report(): r's records are merged in place unless -o files need
// them as built.
void print_report(std::ostream& out, std::ostream& err, report::Report& r, const report::PrintOptions& opts);

}  // namespace tracekit::output
