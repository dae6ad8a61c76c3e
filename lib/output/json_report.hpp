// tracekit's JSON report: a stack report for programs to read (jq, scripts),
// with the raw names, addresses and files that the text formats print only in
// part. One JSON object, UTF-8:
//
// {
//   "format": "tracekit-stacks",   always this
//   "version": 1,                  bumped when a field changes meaning or goes
//   "tool": "profile",
//   "command": "profile -F 99 5",  the command line as typed
//   "host": "myhost",              uname's nodename
//   "unit": "samples",             what "value" counts: "samples" (profile),
//                                  "microseconds" (offcputime, off-CPU time),
//                                  "events" (stackcount)
//   "period_ns": 10101010,         the CPU time one sample stands for; 0 when
//                                  the unit is not samples
//   "start_unix_ns": 1795...,      when tracing started, ns since the epoch
//                                  (above 2^53: JavaScript rounds it; use
//                                  start_time there)
//   "start_time": "2026-11-18T11:06:40.000000000Z",  the same, ISO 8601 UTC
//   "duration_ns": 5000000000,     how long it traced
//   "totals": {                    what the run could not show
//     "lost_events": 0,            records the kernel could not write
//     "missed_stacks": 0,          stacks collected but not stored
//     "dropped": 0,                values not counted (key table full)
//     "truncated_stacks": 0        stacks cut at the deepest the kernel walks
//   },
//   "total_value": 431,            the sum of the stacks' values
//   "frame_order": "leaf_first",   frames[0] is the innermost function (the
//                                  one running, or the one that blocked)
//   "stacks": [                    by value, largest first (then pid, comm,
//     {                            and frames, so the order is fixed)
//       "pid": 4242,
//       "comm": "cpuratio",
//       "value": 300,
//       "kernel": null,            null: this side was not collected (-U, -K,
//                                  or a kernel thread's user side)
//       "user": {
//         "missed": false,         true: collected but lost (frames is [])
//         "frames": [              leaf first
//           {"name": "func_b",     null when no symbol was found
//            "address": "0x55d0c0de1150",  hex string (64-bit values do not
//                                  fit JSON readers' doubles)
//            "offset": 16,         from the symbol's start; null with no name
//            "file": "/usr/bin/cpuratio"}, the mapping's path,
//                                  "[kernel.kallsyms]" or "[module]"; null
//                                  when unknown
//           ...
//         ]
//       }
//     },
//     ...
//   ]
// }
//
// Stacks are the report's records merged as the text output merges them
// (output::merge_same_text under the tool's style): one entry per stack the
// text output prints, so stacks that differ only in addresses within the same
// functions are one entry, with the total value and the addresses and
// offsets of the largest of them (the lowest addresses among equals). Names are the raw names, not the printed
// text (no "+0x1f", "_[k]" or "[unknown]"); strings are escaped by
// util/json.hpp (control characters as \u00XX, ill-formed UTF-8 as U+FFFD).
#pragma once

#include <ostream>

#include "report/report.hpp"

namespace tracekit::output {

// Writes r to out as the JSON report above. Errors are the stream's (out's
// failbit); nothing here fails otherwise.
void write_json(std::ostream& out, const report::Report& r);

}  // namespace tracekit::output
