// Writing a report's -o files (report/files.hpp: the formats, and the -o
// and --format options that name them): each file rendered from the one
// report::Report in its format, written whole or not at all.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report/files.hpp"
#include "report/report.hpp"

namespace tracekit::output {

// Renders r in format f to out (a text stream for every format but pprof's
// binary one). Returns what the "wrote" line adds ("3 stacks", "12 frames
// pruned", ...).
std::string render(std::ostream& out, const report::Report& r, report::Format f);

// Writes r to each file (atomically, see report/files.hpp); says on err
// "TOOL: wrote PATH (what, size)" for each, or "TOOL: cannot write PATH: why".
// Returns false when a file could not be written.
bool write_files(const report::Report& r, const std::vector<report::OutputFile>& files,
                 std::ostream& err);

}  // namespace tracekit::output
