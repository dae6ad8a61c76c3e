// The interactive flame graph: one self-contained SVG (inline CSS and
// script, nothing fetched) drawn from stacks, as flamegraph.pl draws folded
// input, and the differential graph of two profiles.
//
// The stacks are collected (FlameGraph::add), then merged into one tree and
// drawn (render_flamegraph): one frame per node, its width its share of the
// total, siblings in name order, as nested <g> elements so that the
// script finds a frame's ancestors and descendants from the document
// itself. Each frame has a <title> ("name (1,234 samples, 12.34%)"), which
// viewers that run no script show as the tooltip. Controls (the script):
// click a frame to zoom into it (ancestors stay, greyed; what is not in its
// subtree is hidden), "Reset Zoom" (or Escape); "Search" (or Ctrl-F) takes a
// regular expression (a plain string is one), highlights the frames whose
// name matches and prints the share of the total they cover, "Matched:
// 25.0%", counting a stack once when several of its frames match, as
// flamegraph.pl does. The line at the bottom shows the frame under the
// pointer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "output/stack_report.hpp"
#include "report/report.hpp"

namespace tracekit::output {

// Colour schemes, as flamegraph.pl's --colors (hot, io, mem) plus cool
// (blue/green) for off-CPU time. Within each, user, kernel, process and "-"
// frames have hues of their own; a frame's shade comes from a hash of its
// name, so one function has one colour in every graph.
enum class Palette { kHot, kIo, kMem, kCool };

// Parses "hot", "io", "mem", "cool". False for anything else.
bool parse_palette(std::string_view name, Palette* out);

struct FlameOptions {
  std::string title = "Flame Graph";
  std::string subtitle;  // empty: none
  Palette palette = Palette::kHot;
  bool inverted = false;   // icicle graph: the root at the top
  double width = 1200;     // of the image, px
  double min_width = 0.1;  // frames narrower than this (px) are not drawn
  // What values count, in the tooltips ("1,234 samples"). Parentheses are
  // replaced by brackets: the script reads the title's last "(...)".
  std::string count_name = "samples";
  // Differential: colour by each frame's own change (value - before of the
  // stacks that end in it, divided by the largest such change): red grew,
  // blue shrank, white unchanged, as flamegraph.pl colours difffolded.pl's
  // output. Widths stay the values' (the "after" profile).
  bool differential = false;
};

// What a render drew.
struct FlameStats {
  size_t stacks = 0;         // distinct stacks drawn: the same frames added twice count once
  size_t frames_drawn = 0;   // including the root, "all"
  size_t frames_pruned = 0;  // narrower than min_width, with everything above them
  size_t bytes = 0;          // of SVG written
};

// One frame of a stack handed to FlameGraph::add.
struct FlameFrame {
  std::string_view name;
  FrameKind kind = FrameKind::kUser;
};

// The stacks of one graph, merged into a tree when rendered. Names are
// copied once per distinct name, not per frame: a frame is kept as its
// name's id and its kind.
class FlameGraph {
 public:
  FlameGraph();
  // Adds one stack, root first, with its value (and, for a differential
  // graph, the value it had before). An empty stack counts in the root only.
  void add(std::span<const FlameFrame> frames, uint64_t value, uint64_t before = 0);
  // Room for stacks stacks of frames frames in all: no regrowth (copies and
  // fresh pages) while they are added.
  void reserve(size_t stacks, size_t frames) {
    stacks_.reserve(stacks);
    frames_.reserve(frames);
  }

  size_t stacks() const { return stacks_.size(); }
  uint64_t total() const { return total_; }

 private:
  friend class FlameRenderer;
  struct StackRef {
    uint32_t begin = 0, size = 0;  // into frames_
    uint64_t value = 0, before = 0;
  };
  uint32_t intern(std::string_view name);

  std::vector<std::string> names_;
  std::vector<uint32_t> name_slots_;  // open addressing over names_: 0 empty, else id + 1
  std::vector<uint32_t> frames_;      // name id << 2 | kind, every stack's frames in a row
  std::vector<StackRef> stacks_;
  uint64_t total_ = 0;
};

// Writes the SVG. The output's write errors are the caller's to check
// (out's state). An empty graph (total 0) draws only the title and a line
// saying there were no stacks.
FlameStats render_flamegraph(std::ostream& out, const FlameGraph& graph, const FlameOptions& opts);

// The report as a flame graph, what `-o FILE.svg` writes: records merged as
// the text formats merge them (merge_same_text under r.style), the frames
// folded_frames() gives, title from r.command and r.host, counts named by
// r.unit ("samples", "µs", "events"), the cool palette for off-CPU time
// (r.unit kMicroseconds), hot otherwise; the subtitle says the total and
// the duration, and what was lost.
FlameStats write_flamegraph(std::ostream& out, const report::Report& r);

// The title's and subtitle's words for a report (also used by tests).
std::string flamegraph_title(const report::Report& r);
std::string flamegraph_subtitle(const report::Report& r);

}  // namespace tracekit::output
