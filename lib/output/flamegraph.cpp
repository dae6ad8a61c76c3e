// How this works: FlameGraph::add walks a stack root first and finds or
// makes each frame's node under its parent through one open-addressing
// table keyed on (parent, name id, kind); names are interned once, so a
// frame costs a hash of its name and two probes, never a string copy.
//
// The renderer lays the tree out as flamegraph.pl does: image width W, 10 px
// margins, one unit of value = (W - 20) / total px; a node's x is its
// parent's x plus the widths of the siblings before it, siblings in name
// order (byte order, then kind). A node narrower than min_width is not drawn,
// nor anything above it (all narrower still). A first pass decides what is
// drawn and how deep the drawing is (the image's height); the second writes
// the elements, each frame a <g> holding its <title>, <rect>, a <text> label
// when three characters fit, then its children's <g>s. The whole SVG is
// built in one string and written once.
#include "output/flamegraph.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "output/flamegraph_svg.hpp"

namespace tracekit::output {

namespace {

constexpr uint32_t kNone = ~0u;

uint64_t mix(uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t node_key_hash(uint32_t parent, uint32_t name, FrameKind kind) {
  return mix((uint64_t{parent} << 32) ^ (uint64_t{name} << 2) ^ static_cast<uint64_t>(kind));
}

}  // namespace

bool parse_palette(std::string_view name, Palette* out) {
  static constexpr std::pair<std::string_view, Palette> kNames[] = {
      {"hot", Palette::kHot}, {"io", Palette::kIo}, {"mem", Palette::kMem}, {"cool", Palette::kCool}};
  for (const auto& [n, p] : kNames)
    if (name == n) return *out = p, true;
  return false;
}

FlameGraph::FlameGraph() {
  names_.push_back("all");
  nodes_.push_back(Node{});  // the root, name 0
  name_slots_.assign(64, 0);
  node_slots_.assign(64, 0);
  name_slots_[std::hash<std::string_view>{}("all") & 63] = 1;
}

uint32_t FlameGraph::intern(std::string_view name) {
  size_t mask = name_slots_.size() - 1;
  for (size_t i = std::hash<std::string_view>{}(name) & mask;; i = (i + 1) & mask) {
    uint32_t slot = name_slots_[i];
    if (slot == 0) {
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
    if (names_[slot - 1] == name) return slot - 1;
  }
}

void FlameGraph::grow_slots() {
  std::vector<uint32_t> bigger(node_slots_.size() * 2, 0);
  size_t m = bigger.size() - 1;
  for (uint32_t id = 1; id < nodes_.size(); ++id) {
    const Node& n = nodes_[id];
    size_t j = node_key_hash(n.parent, n.name, n.kind) & m;
    while (bigger[j]) j = (j + 1) & m;
    bigger[j] = id + 1;
  }
  node_slots_.swap(bigger);
}

uint32_t FlameGraph::child(uint32_t parent, uint32_t name, FrameKind kind) {
  size_t mask = node_slots_.size() - 1;
  for (size_t i = node_key_hash(parent, name, kind) & mask;; i = (i + 1) & mask) {
    uint32_t slot = node_slots_[i];
    if (slot == 0) {
      Node n;
      n.name = name;
      n.parent = parent;
      n.kind = kind;
      nodes_.push_back(n);
      auto id = static_cast<uint32_t>(nodes_.size() - 1);
      node_slots_[i] = id + 1;
      if (nodes_.size() * 2 > node_slots_.size()) grow_slots();
      return id;
    }
    const Node& n = nodes_[slot - 1];
    if (n.parent == parent && n.name == name && n.kind == kind) return slot - 1;
  }
}

void FlameGraph::add(std::span<const FlameFrame> frames, uint64_t value, uint64_t before) {
  ++stacks_;
  uint32_t at = 0;
  nodes_[0].value += value;
  nodes_[0].before += before;
  for (const FlameFrame& f : frames) {
    at = child(at, intern(f.name), f.kind);
    nodes_[at].value += value;
    nodes_[at].before += before;
  }
  nodes_[at].self_delta += static_cast<int64_t>(value) - static_cast<int64_t>(before);
}

// The renderer: a friend of FlameGraph, so that the tree's layout stays
// private to this file.
class FlameRenderer {
 public:
  FlameRenderer(const FlameGraph& g, const FlameOptions& o) : g_(g), o_(o) {}
  FlameStats run(std::ostream& out);

 private:
  void order_children();
  void layout();
  void write_frames(svg::Writer& w);
  void write_frame(svg::Writer& w, uint32_t id, int depth);

  const FlameGraph& g_;
  const FlameOptions& o_;
  std::vector<uint32_t> first_;     // children of node i: kids_[first_[i] .. first_[i + 1])
  std::vector<uint32_t> kids_;
  std::vector<uint64_t> start_;     // a node's offset from the left, in value units
  std::vector<char> drawn_;
  double per_unit_ = 0;             // px per unit of value
  int depth_max_ = 0;
  size_t drawn_count_ = 0;
  int64_t max_delta_ = 0;
  svg::Geometry geo_;
  std::vector<svg::NameText> name_cache_;  // per name id, made when first drawn
  std::vector<char> name_done_;
};

void FlameRenderer::order_children() {
  size_t n = g_.nodes_.size();
  // Names ranked once, so that sorting siblings compares integers.
  std::vector<uint32_t> by_name(g_.names_.size());
  for (uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
  std::sort(by_name.begin(), by_name.end(),
            [&](uint32_t a, uint32_t b) { return g_.names_[a] < g_.names_[b]; });
  std::vector<uint32_t> rank(by_name.size());
  for (uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;

  first_.assign(n + 1, 0);
  for (uint32_t id = 1; id < n; ++id) ++first_[g_.nodes_[id].parent + 1];
  for (size_t i = 0; i < n; ++i) first_[i + 1] += first_[i];
  kids_.resize(n > 0 ? n - 1 : 0);
  std::vector<uint32_t> fill(first_.begin(), first_.end() - 1);
  for (uint32_t id = 1; id < n; ++id) kids_[fill[g_.nodes_[id].parent]++] = id;
  for (size_t i = 0; i < n; ++i) {
    auto b = kids_.begin() + first_[i], e = kids_.begin() + first_[i + 1];
    if (e - b < 2) continue;
    std::sort(b, e, [&](uint32_t x, uint32_t y) {
      const auto &nx = g_.nodes_[x], &ny = g_.nodes_[y];
      if (nx.name != ny.name) return rank[nx.name] < rank[ny.name];
      return nx.kind < ny.kind;
    });
  }
}

// Decides what is drawn, each node's start and the drawing's depth. Nodes
// are numbered parents before children (add() makes a parent first), so
// one pass in id order sees every parent before its children.
void FlameRenderer::layout() {
  size_t n = g_.nodes_.size();
  start_.assign(n, 0);
  drawn_.assign(n, 0);
  std::vector<int> depth(n, 0);
  drawn_[0] = 1;
  drawn_count_ = 1;
  for (uint32_t p = 0; p < n; ++p) {
    uint64_t at = start_[p];
    for (uint32_t k = first_[p]; k < first_[p + 1]; ++k) {
      uint32_t c = kids_[k];
      const auto& node = g_.nodes_[c];
      start_[c] = at;
      at += node.value;
      depth[c] = depth[p] + 1;
      if (!drawn_[p] || node.value == 0 || static_cast<double>(node.value) * per_unit_ < o_.min_width)
        continue;
      drawn_[c] = 1;
      ++drawn_count_;
      depth_max_ = std::max(depth_max_, depth[c]);
    }
    if (o_.differential) max_delta_ = std::max(max_delta_, std::abs(g_.nodes_[p].self_delta));
  }
}

void FlameRenderer::write_frame(svg::Writer& w, uint32_t id, int depth) {
  const auto& node = g_.nodes_[id];
  if (!name_done_[node.name]) {
    name_cache_[node.name] = svg::name_text(g_.names_[node.name]);
    name_done_[node.name] = 1;
  }
  svg::FrameView f;
  f.name = &name_cache_[node.name];
  f.kind = node.kind;
  f.root = id == 0;
  f.value = node.value;
  f.before = node.before;
  f.self_delta = node.self_delta;
  f.x = geo_.x_pad + static_cast<double>(start_[id]) * per_unit_;
  f.width = static_cast<double>(node.value) * per_unit_;
  f.depth = depth;
  w.open_frame(f, g_.total(), max_delta_);
}

void FlameRenderer::write_frames(svg::Writer& w) {
  // Depth-first, children inside their parent's <g>; an explicit stack, as
  // input stacks can be thousands of frames deep.
  struct Visit {
    uint32_t id;
    uint32_t next;  // index into kids_ of the next child to visit
    int depth;
  };
  std::vector<Visit> todo;
  write_frame(w, 0, 0);
  todo.push_back({0, first_[0], 0});
  while (!todo.empty()) {
    Visit& v = todo.back();
    if (v.next == first_[v.id + 1]) {
      w.close_frame();
      todo.pop_back();
      continue;
    }
    uint32_t c = kids_[v.next++];
    if (!drawn_[c]) continue;
    int d = v.depth + 1;
    write_frame(w, c, d);
    todo.push_back({c, first_[c], d});
  }
}

FlameStats FlameRenderer::run(std::ostream& out) {
  FlameStats stats;
  stats.stacks = g_.stacks_;
  geo_ = svg::Geometry(o_);
  if (g_.total() > 0) {
    per_unit_ = (geo_.width - 2 * geo_.x_pad) / static_cast<double>(g_.total());
    order_children();
    layout();
    stats.frames_drawn = drawn_count_;
    stats.frames_pruned = g_.nodes_.size() - drawn_count_;
  }
  geo_.set_depth(g_.total() > 0 ? depth_max_ + 1 : 0, !o_.subtitle.empty() || stats.frames_pruned);
  name_cache_.resize(g_.names_.size());
  name_done_.assign(g_.names_.size(), 0);

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
