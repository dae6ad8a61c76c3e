// The report model: what a stack tool's run gathered, aggregated and
// symbolized, with what is needed to say what it was. Every output format
// (bcc's text, folded, the flame graph SVG, pprof, speedscope, JSON) renders
// from one Report, so they all show the same data.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "output/stack_report.hpp"

namespace tracekit::report {

// What a record's value counts.
enum class Unit {
  kSamples,       // profile: timed samples (each stands for period_ns of CPU)
  kMicroseconds,  // offcputime: total off-CPU time, µs
  kEvents,        // stackcount: event counts
};

// The file (or the kernel) a frame's address lies in: output::Frame::mapping
// indexes Report::mappings. pprof keeps them so that `pprof` can symbolize
// again from the binaries.
struct Mapping {
  uint64_t start = 0;   // [start, limit) in the address space
  uint64_t limit = 0;
  uint64_t offset = 0;  // file offset mapped at start
  std::string file;     // the path; "[kernel.kallsyms]" for the kernel, "[name]" for a module
  std::string build_id; // lower-case hex; empty when unknown
  bool kernel = false;
};

// What the run could not show, summed over the run (or the interval).
struct Totals {
  uint64_t lost_events = 0;       // records the kernel could not write (ring full)
  uint64_t missed_stacks = 0;     // stack sides collected but not stored (stack table full)
  uint64_t dropped = 0;           // values not counted: the key table was full
  uint64_t truncated_stacks = 0;  // stacks cut at the deepest the kernel walks
};

struct Report {
  std::string tool;     // "profile"
  std::string command;  // the command line as typed: "profile -F 99 -p 185 10"
  std::string host;     // the host's name (uname nodename)
  Unit unit = Unit::kSamples;
  // profile: the CPU time one sample stands for, ns (1e9 / -F, or -c's
  // period); 0 where values are not samples.
  uint64_t period_ns = 0;
  int64_t start_unix_ns = 0;  // when tracing started (wall clock)
  int64_t duration_ns = 0;    // how long it traced for this report
  output::Style style;        // how the tool prints frames (-d, -a, -s, comm in folded)
  // One record per (pid, comm, kernel stack, user stack) key, in no
  // particular order, not merged: records that print the same (addresses
  // in one function) are separate, so that formats that keep addresses
  // can. Text formats merge (output::merge_same_text).
  std::vector<output::Record> records;
  output::FrameTable frames;  // the frames the records' stacks name
  std::vector<Mapping> mappings;
  Totals totals;
};

// The unit's name as the text formats say it: "samples", "us", "events".
inline const char* unit_name(Unit u) {
  switch (u) {
    case Unit::kSamples: return "samples";
    case Unit::kMicroseconds: return "us";
    case Unit::kEvents: return "events";
  }
  return "";
}

}  // namespace tracekit::report
