// A report as a flame graph (what `-o FILE.svg` writes): the records folded
// as the folded format prints them, so that the graph shows what
// `-f` would have printed, with words from the report for the title lines.
#include <cstdio>

#include "output/flamegraph.hpp"
#include "output/flamegraph_svg.hpp"

namespace tracekit::output {

std::string flamegraph_title(const report::Report& r) {
  std::string t = r.command.empty() ? r.tool : r.command;
  if (!r.host.empty()) t += " on " + r.host;
  return t;
}

std::string flamegraph_subtitle(const report::Report& r) {
  uint64_t total = 0;
  for (const report::Record& rec : r.records) total += rec.value;
  std::string s =
      svg::grouped(total) + " " +
      (r.unit == report::Unit::kMicroseconds ? "\xc2\xb5s off-CPU" : report::unit_name(r.unit));
  if (r.duration_ns > 0) {
    char d[32];
    std::snprintf(d, sizeof d, " in %.2f s", static_cast<double>(r.duration_ns) / 1e9);
    s += d;
  }
  std::string lost;
  auto note = [&](uint64_t n, const char* one, const char* many) {
    if (n == 0) return;
    lost += (lost.empty() ? "" : ", ") + svg::grouped(n) + " " + (n == 1 ? one : many);
  };
  note(r.totals.lost_events, "event lost", "events lost");
  note(r.totals.missed_stacks, "stack missed", "stacks missed");
  note(r.totals.dropped, "value dropped (table full)", "values dropped (table full)");
  note(r.totals.truncated_stacks, "stack truncated", "stacks truncated");
  if (!lost.empty()) s += "; " + lost;
  return s;
}

FlameStats write_flamegraph(std::ostream& out, const report::Report& r) {
  // No merge_same_text: the graph merges frames by their text (and kind)
  // anyway, so records that print the same meet in the same frames, and
  // copying every record's frames to merge them first would cost more
  // than the rest of the rendering.
  FlameGraph graph;
  size_t all_frames = 0;  // at most: comm, "-", each side's frames or its marker
  for (const report::Record& rec : r.records) all_frames += 4 + rec.user.size + rec.kernel.size;
  graph.reserve(r.records.size(), all_frames);
  std::vector<FlameFrame> frames;
  std::string text;
  std::vector<FoldedSpan> spans;
  for (const report::Record& rec : r.records) {
    folded_frames(rec, r.frames, r.style, text, spans);
    frames.clear();
    for (const FoldedSpan& s : spans)
      frames.push_back({std::string_view(text).substr(s.at, s.size), s.kind});
    graph.add(frames, rec.value);
  }
  FlameOptions o;
  o.title = flamegraph_title(r);
  o.subtitle = flamegraph_subtitle(r);
  o.count_name = r.unit == report::Unit::kMicroseconds ? "\xc2\xb5s" : report::unit_name(r.unit);
  o.palette = r.unit == report::Unit::kMicroseconds ? Palette::kCool : Palette::kHot;
  return render_flamegraph(out, graph, o);
}

}  // namespace tracekit::output
