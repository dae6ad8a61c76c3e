// How this works: FlameGraph::add only interns the frames' names (one small
// open-addressing table of distinct names) and appends (name id, kind) codes
// to one array. Rendering merges, the way flamegraph.pl does, without a
// table of nodes: the stacks are sorted by their frames (names in byte
// order, then kind), so stacks that share a prefix are adjacent and one walk
// makes the tree, each stack adding nodes only past the prefix it shares
// with the one before. Nodes come out in pre-order, children in name order:
// the order they are drawn in.
//
// Layout as flamegraph.pl's: image width W, 10 px margins, one unit of value
// = (W - 20) / total px; a node starts where its previous sibling ended. A
// node narrower than min_width is not drawn, nor anything above it (all
// narrower still). The same walk lays the tree out: a node's value is final
// once the walk leaves it (the next stack no longer goes through it), and
// then it moves its next sibling's start, and is dropped with everything
// above it when it is too narrow to draw. Only the drawn frames and the
// open path are kept: 100,000 unique stacks make 2.3 million nodes, of
// which about 20,000 are drawn. Each drawn frame is a <g> holding its
// <title>, <rect>, a <text> label when three characters fit, then its
// children's <g>s. The whole SVG is built in one string and written once.
#include "output/flamegraph.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "output/flamegraph_svg.hpp"

namespace tracekit::output {

bool parse_palette(std::string_view name, Palette* out) {
  static constexpr std::pair<std::string_view, Palette> kNames[] = {{"hot", Palette::kHot},
                                                                    {"io", Palette::kIo},
                                                                    {"mem", Palette::kMem},
                                                                    {"cool", Palette::kCool}};
  for (const auto& [n, p] : kNames)
    if (name == n) return *out = p, true;
  return false;
}

FlameGraph::FlameGraph() {
  names_.push_back("all");  // id 0: the root's name
  name_slots_.assign(64, 0);
  name_slots_[std::hash<std::string_view>{}("all") & 63] = 1;
}

uint32_t FlameGraph::intern(std::string_view name) {
  size_t mask = name_slots_.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(name)&mask;; i = (i + 1) & mask) {
    uint32_t slot = name_slots_[i];
    if (slot != 0) {
      if (names_[slot - 1] == name) return slot - 1;
      continue;
    }
    names_.emplace_back(name);
    name_slots_[i] = static_cast<uint32_t>(names_.size());
    if (names_.size() * 2 > name_slots_.size()) {
      std::vector<uint32_t> bigger(name_slots_.size() * 2, 0);
      size_t m = bigger.size() - 1;
      for (uint32_t id = 0; id < names_.size(); ++id) {
        size_t j = std::hash<std::string_view>{}(names_[id]) & m;
        while (bigger[j]) j = (j + 1) & m;
        bigger[j] = id + 1;
      }
      name_slots_.swap(bigger);
    }
    return static_cast<uint32_t>(names_.size() - 1);
  }
}

void FlameGraph::add(std::span<const FlameFrame> frames, uint64_t value, uint64_t before) {
  StackRef s;
  s.begin = static_cast<uint32_t>(frames_.size());
  s.size = static_cast<uint32_t>(frames.size());
  s.value = value;
  s.before = before;
  for (const FlameFrame& f : frames)
    frames_.push_back(intern(f.name) << 2 | static_cast<uint32_t>(f.kind));
  stacks_.push_back(s);
  total_ += value;
}

// The renderer: a friend of FlameGraph, so that the stacks' storage stays
// private to this file.
class FlameRenderer {
 public:
  FlameRenderer(const FlameGraph& g, const FlameOptions& o) : g_(g), o_(o) {}
  FlameStats run(std::ostream& out);

 private:
  struct Node {
    uint64_t value = 0;      // of every stack through this frame
    uint64_t before = 0;     // differential: the same, before
    int64_t self_delta = 0;  // differential: value - before of the stacks ending here
    uint64_t start = 0;      // offset from the left, in value units
    uint32_t name = 0;
    int depth = 0;  // the root's is 0
    FrameKind kind = FrameKind::kUser;
  };
  // Merges the stacks into the drawn nodes (nodes_), laid out.
  void merge();
  void write_frames(svg::Writer& w);

  const FlameGraph& g_;
  const FlameOptions& o_;
  std::vector<Node> nodes_;  // the drawn ones, pre-order; 0 is the root
  double per_unit_ = 0;      // px per unit of value
  int depth_max_ = 0;
  size_t made_ = 0;      // merge(): nodes made, drawn or not, the root included
  size_t distinct_ = 0;  // merge(): stacks with different frames
  int64_t max_delta_ = 0;
  svg::Geometry geo_;
};

void FlameRenderer::merge() {
  // Frames as sort keys: name rank (byte order of names) << 2 | kind, so
  // comparing keys compares what the graph orders siblings by.
  const auto& names = g_.names_;
  std::vector<uint32_t> by_name(names.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(),
            [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  std::vector<uint32_t> rank(names.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;
  std::vector<uint32_t> keys(g_.frames_.size());
  for (size_t i = 0; i < keys.size(); ++i)
    keys[i] = rank[g_.frames_[i] >> 2] << 2 | (g_.frames_[i] & 3);

  const auto& stacks = g_.stacks_;
  std::vector<uint32_t> order(stacks.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  auto frames_of = [&](uint32_t s) {
    return std::span<const uint32_t>(keys.data() + stacks[s].begin, stacks[s].size);
  };
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    auto fa = frames_of(a), fb = frames_of(b);
    return std::lexicographical_compare(fa.begin(), fa.end(), fb.begin(), fb.end());
  });

  nodes_.clear();
  nodes_.push_back(Node{});
  made_ = 1;
  // The current stack's nodes, root excluded: each one's index in nodes_
  // and where its next child starts.
  struct Open {
    uint32_t node;
    uint64_t next;
  };
  std::vector<Open> path;
  uint64_t root_next = 0;
  // The walk leaves the deepest open node: its value is final.
  auto leave = [&] {
    Open o = path.back();
    path.pop_back();
    const Node& n = nodes_[o.node];
    if (o_.differential) max_delta_ = std::max(max_delta_, std::abs(n.self_delta));
    (path.empty() ? root_next : path.back().next) += n.value;
    if (n.value == 0 || static_cast<double>(n.value) * per_unit_ < o_.min_width)
      nodes_.resize(o.node);  // it, and above it what was kept (nothing: all narrower)
  };
  std::span<const uint32_t> prev;
  distinct_ = 0;
  for (uint32_t s : order) {
    auto f = frames_of(s);
    size_t same = 0;
    while (same < f.size() && same < prev.size() && f[same] == prev[same]) ++same;
    if (distinct_ == 0 || same != f.size() || same != prev.size()) ++distinct_;
    while (path.size() > same) leave();
    for (size_t i = same; i < f.size(); ++i) {
      Node n;
      n.name = g_.frames_[stacks[s].begin + i] >> 2;
      n.kind = static_cast<FrameKind>(f[i] & 3);
      n.start = path.empty() ? root_next : path.back().next;
      n.depth = static_cast<int>(path.size()) + 1;
      nodes_.push_back(n);
      ++made_;
      path.push_back({static_cast<uint32_t>(nodes_.size() - 1), n.start});
    }
    prev = f;
    uint64_t v = stacks[s].value, b = stacks[s].before;
    nodes_[0].value += v;
    nodes_[0].before += b;
    for (const Open& o : path) {
      nodes_[o.node].value += v;
      nodes_[o.node].before += b;
    }
    nodes_[path.empty() ? 0 : path.back().node].self_delta +=
        static_cast<int64_t>(v) - static_cast<int64_t>(b);
  }
  while (!path.empty()) leave();
  if (o_.differential) max_delta_ = std::max(max_delta_, std::abs(nodes_[0].self_delta));
  for (const Node& n : nodes_) depth_max_ = std::max(depth_max_, n.depth);
}

void FlameRenderer::write_frames(svg::Writer& w) {
  std::vector<svg::NameText> cache(g_.names_.size());  // made when first drawn
  std::vector<char> cached(g_.names_.size(), 0);
  int open = 0;  // <g>s open: the depth of the last frame written, plus one
  for (uint32_t i = 0; i < nodes_.size(); ++i) {
    const Node& node = nodes_[i];
    int d = node.depth;
    for (; open > d; --open) w.close_frame();
    if (!cached[node.name]) {
      cache[node.name] = svg::name_text(g_.names_[node.name]);
      cached[node.name] = 1;
    }
    svg::FrameView f;
    f.name = &cache[node.name];
    f.kind = node.kind;
    f.root = i == 0;
    f.value = node.value;
    f.before = node.before;
    f.self_delta = node.self_delta;
    f.x = geo_.x_pad + static_cast<double>(node.start) * per_unit_;
    f.width = static_cast<double>(node.value) * per_unit_;
    f.depth = d;
    w.open_frame(f, g_.total(), max_delta_);
    ++open;
  }
  for (; open > 0; --open) w.close_frame();
}

FlameStats FlameRenderer::run(std::ostream& out) {
  FlameStats stats;
  stats.stacks = g_.stacks_.size();
  geo_ = svg::Geometry(o_);
  if (g_.total() > 0) {
    per_unit_ = (geo_.width - 2 * geo_.x_pad) / static_cast<double>(g_.total());
    merge();
    stats.stacks = distinct_;
    stats.frames_drawn = nodes_.size();
    stats.frames_pruned = made_ - nodes_.size();
  }
  geo_.set_depth(g_.total() > 0 ? depth_max_ + 1 : 0, !o_.subtitle.empty() || stats.frames_pruned);

  svg::Writer w(o_, geo_);
  w.head(stats.frames_pruned);
  if (g_.total() > 0) {
    w.begin_frames();
    write_frames(w);
    w.end_frames();
  } else {
    w.no_stacks();
  }
  w.tail();
  stats.bytes = w.text().size();
  out.write(w.text().data(), static_cast<std::streamsize>(w.text().size()));
  return stats;
}

FlameStats render_flamegraph(std::ostream& out, const FlameGraph& graph, const FlameOptions& opts) {
  return FlameRenderer(graph, opts).run(out);
}

}  // namespace tracekit::output
