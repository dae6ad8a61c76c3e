// How this works: the writer appends to one string, in document order:
// head() the XML prolog, the styles and the title lines; the frames (one
// <g> per frame, nested as the tree); tail() the details line, the match
// line and the script (flamegraph_script.cpp), whose constants (image width,
// margins, character width) are written here so that it lays labels out as
// the static labels were.
//
// Colours: each palette gives each frame kind a base colour and a span, and
// three numbers in [0, 1) from a hash (FNV-1a, then mixed) of the frame's name pick the
// shade: the same name has the same colour in every graph, and the golden
// tests are exact. In the hot palette user frames are red (yellow for C++
// names, which hold "::"), kernel frames orange, process names aqua; the
// "-" delimiter is grey in every palette.
#include "output/flamegraph_svg.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "util/strings.hpp"

namespace tracekit::output::svg {

extern const char kScript[];  // flamegraph_script.cpp
extern const char kStyle[];

Geometry::Geometry(const FlameOptions& o) : width(o.width), inverted(o.inverted) {}

void Geometry::set_depth(int rows, bool note_line) {
  if (note_line) top += 18;
  height = top + rows * frame_height + bottom;
}

double Geometry::frame_y(int depth) const {
  if (inverted) return top + depth * frame_height;
  return height - bottom - (depth + 1) * frame_height + 1;
}

NameText name_text(std::string_view raw) {
  // XML 1.0's Char: tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD,
  // U+10000-U+10FFFF. utf8_char() rules out surrogates and ill-formed
  // bytes; what is left to rule out is the C0 controls (tab, newline and CR
  // too: a name is one line), DEL (allowed, but a control) and U+FFFE,
  // U+FFFF, which a strict parser (a browser's) rejects.
  NameText t;
  t.clean.reserve(raw.size());
  size_t i = 0;
  while (i < raw.size()) {
    Utf8Char u = utf8_char(raw.substr(i));
    if (!u.valid || u.code < 0x20 || u.code == 0x7f || u.code == 0xfffe || u.code == 0xffff) {
      t.clean += '?';
      i += u.valid ? u.size : 1;  // what follows a broken sequence may start a good one
    } else {
      t.clean.append(raw.substr(i, u.size));
      i += u.size;
    }
    ++t.chars;
  }
  return t;
}

void append_escaped(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
}

std::string label(const NameText& name, double width, double char_width) {
  // The epsilon: 21.24 / 7.08 is 2.9999999999999996 in doubles.
  auto fit = static_cast<size_t>(std::floor(width / char_width + 1e-9));
  if (fit < 3) return "";
  if (name.chars <= fit) return name.clean;
  size_t keep = fit - 2, at = 0;
  for (size_t n = 0; n < keep; ++n) {
    ++at;
    while (at < name.clean.size() && (static_cast<unsigned char>(name.clean[at]) >> 6) == 2) ++at;
  }
  return name.clean.substr(0, at) + "..";
}

std::string grouped(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

namespace {

struct Shade {
  int r0, r1, g0, g1, b0, b1;  // base and span of each channel
  int rv, gv, bv;              // which hash number (0, 1, 2) each channel uses
};

// C++ user names (with "::") in the hot palette get kHotCxx (yellow). The
// delimiter is kGrey everywhere.
constexpr Shade kHotUser{200, 55, 50, 80, 50, 80, 0, 1, 1};
constexpr Shade kHotCxx{175, 55, 175, 55, 50, 20, 0, 0, 0};
// Rows: hot, io, mem, cool (Palette's order); columns: user, kernel, process.
constexpr Shade kShades[4][3] = {
    {kHotUser,                               // red
     {190, 65, 90, 65, 0, 0, 0, 0, 0},       // orange
     {50, 60, 165, 55, 165, 55, 0, 0, 0}},   // aqua
    {{80, 60, 80, 60, 190, 55, 0, 0, 1},     // blue
     {50, 60, 165, 55, 165, 55, 0, 0, 0},    // aqua
     {210, 30, 190, 30, 130, 30, 0, 0, 1}},  // sand
    {{0, 0, 190, 50, 0, 210, 0, 1, 0},       // green
     {150, 60, 200, 40, 0, 40, 0, 0, 1},     // yellow-green
     {210, 30, 190, 30, 130, 30, 0, 0, 1}},  // sand
    {{40, 50, 130, 60, 200, 55, 0, 1, 0},    // blue
     {50, 60, 190, 55, 90, 50, 0, 0, 1},     // green
     {210, 30, 190, 30, 130, 30, 0, 0, 1}},  // sand
};
constexpr uint32_t kGrey = 0xa0a0a0;

uint32_t rgb(int r, int g, int b) {
  auto c = [](int v) { return static_cast<uint32_t>(std::clamp(v, 0, 255)); };
  return c(r) << 16 | c(g) << 8 | c(b);
}

}  // namespace

uint32_t frame_colour(const FrameView& f, const FlameOptions& o, int64_t max_delta) {
  if (o.differential) {
    if (f.self_delta == 0 || max_delta == 0) return 0xffffff;
    double ratio = static_cast<double>(std::abs(f.self_delta)) / static_cast<double>(max_delta);
    int fade = static_cast<int>(210 * (1 - ratio));
    return f.self_delta > 0 ? rgb(255, fade, fade) : rgb(fade, fade, 255);
  }
  if (f.kind == FrameKind::kDelimiter) return kGrey;
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : f.name->clean) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  // FNV's low bits barely change with the last byte ("func_a", "func_b"):
  // splitmix64's finalizer spreads every byte over all of them.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  double v[3] = {static_cast<double>(h & 0xffff) / 65536.0,
                 static_cast<double>((h >> 16) & 0xffff) / 65536.0,
                 static_cast<double>((h >> 32) & 0xffff) / 65536.0};
  int kind = f.kind == FrameKind::kKernel ? 1 : f.kind == FrameKind::kProcess && !f.root ? 2 : 0;
  const Shade* s = &kShades[static_cast<int>(o.palette)][kind];
  if (o.palette == Palette::kHot && kind == 0 && f.name->clean.find("::") != std::string::npos)
    s = &kHotCxx;
  return rgb(s->r0 + static_cast<int>(s->r1 * v[s->rv]), s->g0 + static_cast<int>(s->g1 * v[s->gv]),
             s->b0 + static_cast<int>(s->b1 * v[s->bv]));
}

Writer::Writer(const FlameOptions& o, const Geometry& g) : o_(o), g_(g) {
  std::string count = name_text(o.count_name).clean;
  for (char& c : count) c = c == '(' ? '[' : c == ')' ? ']' : c;
  append_escaped(count_, count);
  s_.reserve(1 << 16);
}

void Writer::num(double v) {
  char buf[64];
  auto [p, ec] =
      std::to_chars(buf, buf + sizeof buf, std::round(v * 100) / 100, std::chars_format::fixed, 2);
  char* end = ec == std::errc() ? p : buf;
  if (end != buf) {
    while (end[-1] == '0') --end;
    if (end[-1] == '.') --end;
  }
  if (end - buf == 2 && buf[0] == '-' && buf[1] == '0') {  // "-0.001" -> "0"
    s_ += '0';
    return;
  }
  s_.append(buf, end);
}

void Writer::text_element(std::string_view attrs, double x, double y, std::string_view raw) {
  put("<text ", attrs, " x=\"", x, "\" y=\"", y, "\">");
  append_escaped(s_, name_text(raw).clean);
  s_ += "</text>\n";
}

void Writer::head(size_t pruned) {
  put("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"",
      g_.width, "\" height=\"", g_.height, "\" viewBox=\"0 0 ", g_.width, " ", g_.height,
      "\" xmlns=\"http://www.w3.org/2000/svg\">\n<style>");
  s_ += kStyle;
  s_ +=
      "</style>\n<defs><linearGradient id=\"bg\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"";
  s_ += o_.differential ? "#eeeeee" : o_.palette == Palette::kHot ? "#eeeeb0" : "#e0e8f0";
  s_ +=
      "\" offset=\"95%\"/></linearGradient></defs>\n<rect width=\"100%\" height=\"100%\" "
      "fill=\"url(#bg)\"/>\n";
  text_element("id=\"title\"", g_.width / 2, 24, o_.title);
  if (!o_.subtitle.empty() || pruned) {
    std::string note = o_.subtitle;
    if (pruned) {
      if (!note.empty()) note += " \xc2\xb7 ";  // a middle dot
      char mw[32];
      std::snprintf(mw, sizeof mw, "%g", o_.min_width);
      note += grouped(pruned) + (pruned == 1 ? " frame" : " frames") + " narrower than " + mw +
              " px not drawn";
    }
    text_element("id=\"subtitle\"", g_.width / 2, 42, note);
  }
  text_element("id=\"unzoom\" class=\"ctl hide\"", g_.x_pad, 24, "Reset Zoom");
  text_element("id=\"search\" class=\"ctl\"", g_.width - g_.x_pad, 24, "Search");
}

void Writer::begin_frames() { s_ += "<g id=\"frames\">\n"; }
void Writer::end_frames() { s_ += "</g>\n"; }

void Writer::no_stacks() { text_element("id=\"empty\"", g_.width / 2, g_.top + 12, "No stacks"); }

void Writer::open_frame(const FrameView& f, uint64_t total, int64_t max_delta) {
  s_ += "<g><title>";
  append_escaped(s_, f.name->clean);
  s_ += " (";
  s_ += grouped(f.value);
  s_ += ' ';
  s_ += count_;
  char pct[32];
  std::snprintf(pct, sizeof pct, ", %.2f%%",
                100.0 * static_cast<double>(f.value) / static_cast<double>(total));
  s_ += pct;
  if (o_.differential) {
    s_ += "; before ";
    s_ += grouped(f.before);
    s_ += ", delta ";
    s_ += f.value >= f.before ? '+' : '-';
    s_ += grouped(f.value >= f.before ? f.value - f.before : f.before - f.value);
  }
  char fill[16];
  std::snprintf(fill, sizeof fill, "#%06x", frame_colour(f, o_, max_delta));
  double y = g_.frame_y(f.depth);
  put(")</title><rect x=\"", f.x, "\" y=\"", y, "\" width=\"", f.width, "\" height=\"15\" fill=\"",
      std::string_view(fill), "\"/>");
  // The label fits the width as written (two decimals), as the script
  // computes it when it restores the frame after a zoom.
  std::string text = label(*f.name, std::round(f.width * 100) / 100, g_.char_width);
  if (!text.empty()) {
    put("<text x=\"", f.x + 3, "\" y=\"", y + 10.5, "\">");
    append_escaped(s_, text);
    s_ += "</text>";
  }
  s_ += '\n';
}

void Writer::tail() {
  text_element("id=\"details\"", g_.x_pad, g_.height - 17, " ");
  text_element("id=\"matched\" class=\"hide\"", g_.width - g_.x_pad, g_.height - 17, " ");
  // The script's constants: what it needs to lay labels out as these were.
  put("<script type=\"text/ecmascript\"><![CDATA[\nvar W = ", g_.width, ", XPAD = ", g_.x_pad,
      ", CW = ", g_.char_width, ";\n");
  s_ += kScript;
  s_ += "]]></script>\n</svg>\n";
}

}  // namespace tracekit::output::svg
