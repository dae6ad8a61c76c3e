// The report model: what a stack tool's run gathered, aggregated and
// symbolized (its frames, stacks and records, and the style its tool prints
// them in), with what is needed to say what it was. Every output format
// (bcc's text, folded, the flame graph SVG, pprof, speedscope, JSON) renders
// from one Report, so they all show the same data.
#pragma once

#include <cstdint>
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace tracekit::report {

// A frame as resolved, and the stacks and records of a report. Rendered by
// output/stack_report.hpp (text, folded) and the other output formats.
struct Frame {
  uint64_t addr = 0;
  std::string name;  // empty: unresolved, printed as "[unknown]"
  uint64_t offset = 0;
  int32_t mapping = -1;  // index into Report::mappings; -1: none known
};

enum class StackState {
  kAbsent,   // not collected (user side under -K): prints nothing
  kMissed,   // collected but lost (table full): prints the "missed" marker
  kPresent,  // frames below (possibly empty)
};

// A stack side of a record: its frames are a run of ids in the FrameTable
// of its records (FrameTable::frames()), leaf first.
struct Stack {
  StackState state = StackState::kAbsent;
  uint32_t first = 0;  // where its ids start in the table
  uint32_t size = 0;   // how many frames
};

// The frames that a set of records' stacks name: each frame (an address
// and what it resolved to) stored once however many stacks hold it, and
// each stack as a run of 4-byte ids into them. 100,000 stacks of 16 frames
// cost 6.4 MB of ids here, not 1.6 million frames with a name each (about
// 90 MB). Records are rendered with the table they were built with.
class FrameTable {
 public:
  using Id = uint32_t;

  // Stores f; its id. Callers that see a frame again reuse its id.
  Id add(Frame f) {
    frames_.push_back(std::move(f));
    return static_cast<Id>(frames_.size() - 1);
  }
  // A present stack of the frames ids names, leaf first.
  Stack stack(std::span<const Id> ids) {
    Stack s{StackState::kPresent, static_cast<uint32_t>(ids_.size()),
            static_cast<uint32_t>(ids.size())};
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    return s;
  }
  // A present stack of frames, each stored (add()) as a frame of its own.
  Stack stack(std::vector<Frame> frames);
  // Room for stacks of n frames in all.
  void reserve(size_t n) { ids_.reserve(n); }

  const Frame& operator[](Id id) const { return frames_[id]; }
  Frame& operator[](Id id) { return frames_[id]; }
  // A stack's ids, leaf first (empty unless present); valid until the
  // next stack is added.
  std::span<const Id> ids(const Stack& s) const {
    if (s.state != StackState::kPresent) return {};
    return std::span<const Id>(ids_).subspan(s.first, s.size);
  }
  // A stack's frames, leaf first: `for (const Frame& f : table.frames(s))`.
  auto frames(const Stack& s) const {
    return std::views::transform(ids(s), [this](Id id) -> const Frame& { return frames_[id]; });
  }
  size_t size() const { return frames_.size(); }

 private:
  std::vector<Frame> frames_;  // by id
  std::vector<Id> ids_;        // every stack's ids, one run each
};

struct Record {
  std::string comm;
  int64_t pid = -1;  // printed in the process line / folded prefix
  Stack kernel;
  Stack user;
  uint64_t value = 0;
};

struct Style {
  int frame_indent = 4;            // stackcount uses 2
  bool process_line = true;        // multi-line: the "-  comm (pid)" line
  bool bracketed_process = false;  // ... as stackcount's "    comm [pid]" instead
  bool folded_comm = true;         // folded: start the line with comm
  bool delimiter = false;          // -d: "--" / "-" between kernel and user
  bool annotate_kernel = false;    // -a: "_[k]" after kernel frame names
  bool addresses = false;          // -v: address "%-16x " before each frame (multi-line)
  bool offsets = false;            // -s: "+0x1f" after resolved names
  std::string missed_kernel = "[Missed Kernel Stack]";
  std::string missed_user = "[Missed User Stack]";
};

// What a record's value counts.
enum class Unit {
  kSamples,       // profile: timed samples (each stands for period_ns of CPU)
  kMicroseconds,  // offcputime: total off-CPU time, µs
  kEvents,        // stackcount: event counts
};

// The file (or the kernel) a frame's address lies in: Frame::mapping
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
  Style style;                // how the tool prints frames (-d, -a, -s, comm in folded)
  // One record per (pid, comm, kernel stack, user stack) key, in no
  // particular order, not merged: records that print the same (addresses
  // in one function) are separate, so that formats that keep addresses
  // can. Text formats merge (output::merge_same_text).
  std::vector<Record> records;
  FrameTable frames;  // the frames the records' stacks name
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

// Cuts each record's user stack after its first (leafmost) stack root, so
// that the made-up frames (symbols/stack_roots.hpp) past it are not printed. Records that then print
// the same are merged by the report (output::merge_same_text).
void trim_past_stack_roots(std::vector<Record>& records, const FrameTable& frames);

}  // namespace tracekit::report
