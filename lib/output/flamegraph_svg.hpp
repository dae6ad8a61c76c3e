// The flame graph's SVG text: geometry, colours, escaping and the elements,
// for output/flamegraph.cpp (which decides what is drawn where). Private to
// lib/output: the public interface is output/flamegraph.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "output/flamegraph.hpp"

namespace tracekit::output::svg {

// Sizes in px, as flamegraph.pl's defaults: 16 px rows (15 px frames and a
// 1 px gap), 12 px Verdana whose characters are taken as 0.59 em wide to
// fit labels, 10 px side margins; the title line (and the subtitle line,
// when there is one) above, the details line below.
struct Geometry {
  Geometry() = default;
  explicit Geometry(const FlameOptions& o);
  // rows: frame rows drawn; note_line: a subtitle line under the title.
  void set_depth(int rows, bool note_line);
  double frame_y(int depth) const;  // top of a frame's rect

  double width = 1200;
  double height = 0;
  double x_pad = 10;
  double frame_height = 16;
  double font_size = 12;
  double char_width = 12 * 0.59;
  double top = 36;     // above the frames
  double bottom = 34;  // below them
  bool inverted = false;
};

// A name as the SVG shows it: control characters, bytes that are not UTF-8
// and the code points XML forbids (U+FFFE, U+FFFF) become '?' (the document
// must be well-formed XML, or a browser shows an error page), and its length in
// characters, to cut labels at character boundaries.
struct NameText {
  std::string clean;
  size_t chars = 0;
};
NameText name_text(std::string_view raw);

// Appends s with &, <, >, " escaped.
void append_escaped(std::string& out, std::string_view s);

// The label that fits width px: the whole name, or its first characters and
// "..", or "" when fewer than three characters fit.
std::string label(const NameText& name, double width, double char_width);

// "1234567" -> "1,234,567".
std::string grouped(uint64_t v);

// What the writer needs of one frame.
struct FrameView {
  const NameText* name = nullptr;
  FrameKind kind = FrameKind::kUser;
  bool root = false;
  uint64_t value = 0;
  uint64_t before = 0;
  int64_t self_delta = 0;
  double x = 0, width = 0;
  int depth = 0;
};

// A frame's fill, 0xRRGGBB. Differential: by self_delta / max_delta (red
// grew, blue shrank, white same); otherwise the palette's hue for its kind,
// the shade from a hash of its name.
uint32_t frame_colour(const FrameView& f, const FlameOptions& o, int64_t max_delta);

class Writer {
 public:
  Writer(const FlameOptions& o, const Geometry& g);
  void head(size_t pruned);  // the document's start, styles, title lines, controls
  void begin_frames();
  void open_frame(const FrameView& f, uint64_t total, int64_t max_delta);
  void close_frame() { s_ += "</g>\n"; }
  void end_frames();
  void no_stacks();
  void tail();  // the details and match lines, the script, the end
  const std::string& text() const { return s_; }

 private:
  void num(double v);  // at most two decimals, no trailing zeros
  // Appends each piece: text as it is, numbers through num().
  template <class... Pieces>
  void put(const Pieces&... pieces) {
    (piece(pieces), ...);
  }
  void piece(std::string_view text) { s_ += text; }
  void piece(double v) { num(v); }
  // <text ATTRS x= y=>raw, cleaned and escaped</text> and a newline.
  void text_element(std::string_view attrs, double x, double y, std::string_view raw);
  const FlameOptions& o_;
  const Geometry& g_;
  std::string count_;  // o.count_name, escaped, its parentheses made brackets
  std::string s_;
};

}  // namespace tracekit::output::svg
