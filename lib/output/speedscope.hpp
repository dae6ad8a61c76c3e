// A stack report in speedscope's file format
// (https://www.speedscope.app/file-format-schema.json), which speedscope
// opens directly (speedscope FILE, or its web page's file picker).
//
// What we write:
//   - one "sampled" profile, named after the command line (file "name" too):
//     speedscope's flame views already split processes, since the comm is
//     the root frame when the style puts it there, as in the folded output;
//     a profile per process would only add a menu to switch between them;
//   - shared.frames: one entry per distinct (name, file), name as the folded
//     output prints it (comm, "-" between user and kernel under -d, "+0x1f"
//     under -s, "_[k]" under -a, "[unknown]", the missed markers; control
//     characters as '?', but ';' kept), file the frame's mapping's path
//     (Report::mappings) when known;
//   - samples: one per distinct stack, root first, as folded_frames() gives
//     them, records merged first (merge_same_text with the report's style,
//     then stacks that print alike, e.g. one comm in two processes); sorted
//     by their frames' (name, file), so speedscope's time-order view reads as
//     a flame graph does and the file does not depend on the records' order;
//     frames are numbered in order of first use in that order;
//   - weights and unit by the report's unit:
//       samples (profile):     "nanoseconds", samples * period_ns: the CPU
//                              time the samples stand for, which speedscope
//                              shows as time, as pprof's cpu/nanoseconds does
//                              (with no period: "none", the sample counts);
//       microseconds (offcpu): "microseconds", the values;
//       events (stackcount):   "none", the counts;
//   - startValue 0 and endValue the sum of the weights, as speedscope's own
//     exporter writes them; exporter "tracekit", activeProfileIndex 0.
#pragma once

#include <ostream>

#include "report/report.hpp"

namespace tracekit::output {

// Writes r to out as a speedscope JSON file. Errors are the stream's (out's
// failbit); nothing here fails otherwise.
void write_speedscope(std::ostream& out, const report::Report& r);

}  // namespace tracekit::output
