// How this works: a JIT appends "START SIZE name" lines to /tmp/perf-PID.map
// as it emits code; START and SIZE are hex (V8 writes no "0x", others do)
// and the name runs to the end of the line, spaces included (Java
// signatures). A JIT that frees and reuses code memory just appends the new
// function, so lines can overlap; the later line is the truth. parse() lays
// the lines, in file order, onto a map of disjoint ranges, cutting away what
// a later line covers, then flattens it into a sorted vector that lookup()
// binary-searches. A range cut from a line keeps that line's start, so the
// offset stays relative to the real function start.
#include "symbols/perf_map.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <map>
#include <string_view>

#include "util/safe_file.hpp"
#include "util/strings.hpp"

namespace tracekit::symbols {

namespace {

struct Line {
  uint64_t start, size;
  std::string_view name;
};

std::optional<Line> parse_line(std::string_view s) {
  s = trim(s);
  size_t sp1 = s.find_first_of(" \t");
  if (sp1 == std::string_view::npos) return std::nullopt;
  std::string_view rest = trim(s.substr(sp1));
  size_t sp2 = rest.find_first_of(" \t");
  if (sp2 == std::string_view::npos) return std::nullopt;
  auto start = parse_hex<uint64_t>(s.substr(0, sp1));
  auto size = parse_hex<uint64_t>(rest.substr(0, sp2));
  std::string_view name = trim(rest.substr(sp2));
  if (!start || !size || *size == 0 || name.empty()) return std::nullopt;
  if (*start + *size < *start) return std::nullopt;  // wraps around
  return Line{*start, *size, name};
}

}  // namespace

PerfMap PerfMap::parse(std::istream& in) {
  struct Piece {
    uint64_t end, sym_start;
    uint32_t name;
  };
  PerfMap pm;
  std::map<uint64_t, Piece> pieces;  // by start, disjoint
  std::string text;
  while (std::getline(in, text)) {
    auto line = parse_line(text);
    if (!line) continue;
    uint64_t s = line->start, e = line->start + line->size;
    auto name = static_cast<uint32_t>(pm.names_.size());
    pm.names_.emplace_back(line->name);

    auto it = pieces.lower_bound(s);
    if (it != pieces.begin()) {
      auto prev = std::prev(it);
      if (prev->second.end > s) {
        if (prev->second.end > e)
          pieces.emplace(e, Piece{prev->second.end, prev->second.sym_start, prev->second.name});
        prev->second.end = s;
      }
    }
    while (it != pieces.end() && it->first < e) {
      if (it->second.end > e)
        pieces.emplace(e, Piece{it->second.end, it->second.sym_start, it->second.name});
      it = pieces.erase(it);
    }
    pieces.emplace(s, Piece{e, s, name});
  }
  pm.entries_.reserve(pieces.size());
  for (const auto& [start, p] : pieces) pm.entries_.push_back({start, p.end, p.sym_start, p.name});
  return pm;
}

std::optional<PerfMap> PerfMap::load(const std::string& path, uid_t owner_uid) {
  struct stat st {};
  auto fd = open_regular(path, &st);
  // One link: a hard link to another's file is not the JIT's map.
  if (!fd || (st.st_uid != geteuid() && st.st_uid != owner_uid) || st.st_nlink != 1)
    return std::nullopt;
  auto text = read_at_most(fd->get(), kMaxBytes);
  if (!text) return std::nullopt;
  std::istringstream in(std::move(*text));
  PerfMap pm = parse(in);
  pm.set_path(path);
  return pm;
}

std::optional<Resolved> PerfMap::lookup(uint64_t addr) const {
  auto it = std::upper_bound(entries_.begin(), entries_.end(), addr,
                             [](uint64_t v, const Entry& e) { return v < e.start; });
  if (it == entries_.begin()) return std::nullopt;
  const Entry& e = *std::prev(it);
  if (addr >= e.end) return std::nullopt;
  return Resolved{names_[e.name], addr - e.sym_start, path_};
}

}  // namespace tracekit::symbols
