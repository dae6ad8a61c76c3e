#include "output/flamegraph.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "../report/sample_report.hpp"
#include "output/flamegraph_svg.hpp"
#include "output/folded_input.hpp"
#include "util/strings.hpp"

namespace tracekit::output {
namespace {

// One drawn frame, as read back from the SVG.
struct Drawn {
  std::string title;
  double x = 0, y = 0, width = 0;
  std::string fill;
  std::string label;
};

std::vector<Drawn> drawn_frames(const std::string& svg) {
  static const std::regex frame(
      R"re(<g><title>([^<]*)</title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)" height="15" )re"
      R"re(fill="(#[0-9a-f]{6})"/>(?:<text x="[^"]*" y="[^"]*">([^<]*)</text>)?)re");
  std::vector<Drawn> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), frame); it != std::sregex_iterator();
       ++it) {
    const auto& m = *it;
    out.push_back({m[1], std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), m[5], m[6]});
  }
  return out;
}

// The frames by their title's name (names are unique in these tests).
std::map<std::string, Drawn> by_name(const std::string& svg) {
  std::map<std::string, Drawn> out;
  for (const Drawn& d : drawn_frames(svg)) out[d.title.substr(0, d.title.rfind(" ("))] = d;
  return out;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// Adds folded lines to a graph.
FlameGraph graph_of(const std::vector<std::string>& lines) {
  FlameGraph g;
  std::vector<FlameFrame> frames;
  for (const std::string& line : lines) {
    uint64_t n = 0;
    EXPECT_TRUE(parse_folded_line(line, &frames, &n)) << line;
    g.add(frames, n);
  }
  return g;
}

std::string render(const FlameGraph& g, const FlameOptions& o = {}, FlameStats* stats = nullptr) {
  std::ostringstream out;
  FlameStats s = render_flamegraph(out, g, o);
  if (stats) *stats = s;
  EXPECT_EQ(s.bytes, out.str().size());
  return out.str();
}

std::string frames_section(const std::string& svg) {
  size_t b = svg.find("<g id=\"frames\">\n"), e = svg.find("<text id=\"details\"");
  if (b == std::string::npos || e == std::string::npos) return "";
  return svg.substr(b, e - b);
}

// The whole frame section of a small graph, as golden text: nesting,
// order (siblings by name), geometry, colours, labels, titles.
TEST(FlameGraph, GoldenFrames) {
  FlameStats s;
  std::string svg = render(graph_of({"app;main;work 30", "app;main;-;read_[k] 10"}), {}, &s);
  EXPECT_EQ(frames_section(svg),
            "<g id=\"frames\">\n"
            "<g><title>all (40 samples, 100.00%)</title><rect x=\"10\" y=\"101\" width=\"1180\" "
            "height=\"15\" fill=\"#f13c3c\"/><text x=\"13\" y=\"111.5\">all</text>\n"
            "<g><title>app (40 samples, 100.00%)</title><rect x=\"10\" y=\"85\" width=\"1180\" "
            "height=\"15\" fill=\"#63d2d2\"/><text x=\"13\" y=\"95.5\">app</text>\n"
            "<g><title>main (40 samples, 100.00%)</title><rect x=\"10\" y=\"69\" width=\"1180\" "
            "height=\"15\" fill=\"#e77f7f\"/><text x=\"13\" y=\"79.5\">main</text>\n"
            "<g><title>- (10 samples, 25.00%)</title><rect x=\"10\" y=\"53\" width=\"295\" "
            "height=\"15\" fill=\"#a0a0a0\"/><text x=\"13\" y=\"63.5\">-</text>\n"
            "<g><title>read (10 samples, 25.00%)</title><rect x=\"10\" y=\"37\" width=\"295\" "
            "height=\"15\" fill=\"#ed8900\"/><text x=\"13\" y=\"47.5\">read</text>\n"
            "</g>\n"
            "</g>\n"
            "<g><title>work (30 samples, 75.00%)</title><rect x=\"305\" y=\"53\" width=\"885\" "
            "height=\"15\" fill=\"#cc7d7d\"/><text x=\"308\" y=\"63.5\">work</text>\n"
            "</g>\n"
            "</g>\n"
            "</g>\n"
            "</g>\n"
            "</g>\n");
  EXPECT_NE(svg.find("<svg version=\"1.1\" width=\"1200\" height=\"150\" viewBox=\"0 0 1200 150\""),
            std::string::npos);
  EXPECT_NE(svg.find("<text id=\"title\" x=\"600\" y=\"24\">Flame Graph</text>"),
            std::string::npos);
  EXPECT_EQ(s.stacks, 2u);
  EXPECT_EQ(s.frames_drawn, 6u);
  EXPECT_EQ(s.frames_pruned, 0u);
  EXPECT_EQ(svg.find("id=\"subtitle\""), std::string::npos);  // no subtitle, nothing pruned
}

// Self-contained: no reference outside the document but the SVG namespace.
TEST(FlameGraph, NothingFetched) {
  std::string svg = render(graph_of({"a;b 1"}));
  EXPECT_EQ(count(svg, "http"), count(svg, "http://www.w3.org/2000/svg\""));  // the namespace
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_EQ(svg.find("href"), std::string::npos);
  EXPECT_EQ(svg.find("@import"), std::string::npos);
  EXPECT_NE(
      svg.find("<script type=\"text/ecmascript\"><![CDATA[\nvar W = 1200, XPAD = 10, CW = 7.08;"),
      std::string::npos);
}

// Widths are exact shares of the 1180 px between the margins; siblings in
// name order, each starting where the one before ends.
TEST(FlameGraph, WidthsAreSharesOfTheTotal) {
  FlameOptions o;
  o.width = 1020;  // 1000 px for 400 samples: 2.5 px each
  FlameStats s;
  std::string svg =
      render(graph_of({"p;zeta 100", "p;alpha 40", "p;mid;x 60", "p;mid 200"}), o, &s);
  auto f = by_name(svg);
  ASSERT_EQ(f.size(), 6u);
  EXPECT_EQ(f["all"].width, 1000);
  EXPECT_EQ(f["p"].width, 1000);
  EXPECT_EQ(f["alpha"].x, 10);
  EXPECT_EQ(f["alpha"].width, 100);
  EXPECT_EQ(f["mid"].x, 110);
  EXPECT_EQ(f["mid"].width, 650);
  EXPECT_EQ(f["x"].x, 110);
  EXPECT_EQ(f["x"].width, 150);
  EXPECT_EQ(f["zeta"].x, 760);
  EXPECT_EQ(f["zeta"].width, 250);
  EXPECT_EQ(f["mid"].title, "mid (260 samples, 65.00%)");
  // One <g> and one <rect> per drawn frame (and the background's rect).
  EXPECT_EQ(count(frames_section(svg), "<g>"), s.frames_drawn);
  EXPECT_EQ(count(svg, "<rect "), s.frames_drawn + 1);
  EXPECT_EQ(count(frames_section(svg), "</g>"), s.frames_drawn + 1);
}

TEST(FlameGraph, SameStacksMerge) {
  FlameStats s;
  std::string svg = render(graph_of({"a;b 1", "a;b 2", "a;c 3"}), {}, &s);
  EXPECT_EQ(s.stacks, 2u);
  EXPECT_EQ(s.frames_drawn, 4u);
  EXPECT_EQ(by_name(svg)["b"].title, "b (3 samples, 50.00%)");
}

TEST(FlameGraph, Inverted) {
  FlameOptions o;
  o.inverted = true;
  auto f = by_name(render(graph_of({"a;b 1"}), o));
  EXPECT_EQ(f["all"].y, 36);  // under the title line
  EXPECT_EQ(f["a"].y, 52);
  EXPECT_EQ(f["b"].y, 68);
  auto up = by_name(render(graph_of({"a;b 1"})));
  EXPECT_EQ(up["all"].y, 69);  // height 36 + 3 * 16 + 34 = 118, less 34, less a row, plus 1
  EXPECT_EQ(up["b"].y, 37);
}

// Frames narrower than min_width are not drawn, nor anything above them;
// the SVG says how many.
TEST(FlameGraph, Pruning) {
  std::vector<std::string> lines = {"big 1000000"};
  for (int i = 0; i < 10; ++i) lines.push_back("small;leaf" + std::to_string(i) + " 1");
  FlameGraph g = graph_of(lines);
  FlameStats s;
  std::string svg = render(g, {}, &s);
  EXPECT_EQ(s.frames_drawn, 2u);  // all, big
  EXPECT_EQ(s.frames_pruned, 11u);
  EXPECT_NE(svg.find("<text id=\"subtitle\" x=\"600\" y=\"42\">11 frames narrower than 0.1 px not "
                     "drawn</text>"),
            std::string::npos);
  EXPECT_EQ(count(svg, "<g>"), 2u);

  FlameOptions all;
  all.min_width = 0;
  render(g, all, &s);
  EXPECT_EQ(s.frames_drawn, 13u);
  EXPECT_EQ(s.frames_pruned, 0u);

  FlameOptions sub;
  sub.subtitle = "a & b";
  svg = render(g, sub, &s);
  EXPECT_NE(svg.find(">a &amp; b \xc2\xb7 11 frames narrower than 0.1 px not drawn</text>"),
            std::string::npos);
}

TEST(FlameGraph, Empty) {
  FlameStats s;
  std::string svg = render(FlameGraph(), {}, &s);
  EXPECT_EQ(s.frames_drawn, 0u);
  EXPECT_EQ(s.stacks, 0u);
  EXPECT_NE(svg.find(">No stacks</text>"), std::string::npos);
  EXPECT_EQ(svg.find("id=\"frames\""), std::string::npos);
}

// Differential: widths from the values, red where a frame's own value
// grew, blue where it shrank, in proportion to the largest change.
TEST(FlameGraph, DifferentialColours) {
  FlameGraph g;
  std::vector<FlameFrame> grew = {{"p", FrameKind::kProcess}, {"grew", FrameKind::kUser}};
  std::vector<FlameFrame> shrank = {{"p", FrameKind::kProcess}, {"shrank", FrameKind::kUser}};
  std::vector<FlameFrame> half = {{"p", FrameKind::kProcess}, {"half", FrameKind::kUser}};
  std::vector<FlameFrame> same = {{"p", FrameKind::kProcess}, {"same", FrameKind::kUser}};
  g.add(grew, 30, 10);    // +20
  g.add(shrank, 10, 30);  // -20
  g.add(half, 20, 30);    // -10
  g.add(same, 40, 40);
  FlameOptions o;
  o.differential = true;
  auto f = by_name(render(g, o));
  EXPECT_EQ(f["grew"].fill, "#ff0000");
  EXPECT_EQ(f["shrank"].fill, "#0000ff");
  EXPECT_EQ(f["half"].fill, "#6969ff");  // 210 * (1 - 10/20) = 105
  EXPECT_EQ(f["same"].fill, "#ffffff");
  EXPECT_EQ(f["p"].fill, "#ffffff");  // no stack ends in p
  EXPECT_EQ(f["grew"].title, "grew (30 samples, 30.00%; before 10, delta +20)");
  EXPECT_EQ(f["shrank"].title, "shrank (10 samples, 10.00%; before 30, delta -20)");
  EXPECT_EQ(f["p"].title, "p (100 samples, 100.00%; before 110, delta -10)");
  EXPECT_EQ(f["grew"].width, 354);
}

// Kinds have their own colours; the same name the same colour everywhere.
TEST(FlameGraph, ColoursByKindAndName) {
  FlameGraph g;
  std::vector<FlameFrame> s = {{"proc", FrameKind::kProcess},
                               {"user_fn", FrameKind::kUser},
                               {"-", FrameKind::kDelimiter},
                               {"kernel_fn", FrameKind::kKernel}};
  g.add(s, 5);
  std::vector<FlameFrame> cxx = {{"proc", FrameKind::kProcess}, {"ns::f", FrameKind::kUser}};
  g.add(cxx, 5);
  auto rgb = [](const std::string& hex) {
    unsigned long v = std::stoul(hex.substr(1), nullptr, 16);
    return std::vector<int>{int(v >> 16), int((v >> 8) & 0xff), int(v & 0xff)};
  };
  auto f = by_name(render(g));
  auto user = rgb(f["user_fn"].fill), kernel = rgb(f["kernel_fn"].fill), proc = rgb(f["proc"].fill),
       yellow = rgb(f["ns::f"].fill);
  EXPECT_GE(user[0], 200);  // red: the green and blue equal and lower
  EXPECT_EQ(user[1], user[2]);
  EXPECT_LT(user[1], user[0]);
  EXPECT_GE(kernel[0], 190);  // orange: no blue
  EXPECT_EQ(kernel[2], 0);
  EXPECT_LT(proc[0], proc[1]);  // aqua
  EXPECT_EQ(proc[1], proc[2]);
  EXPECT_EQ(yellow[0], yellow[1]);  // C++ names yellow
  EXPECT_GT(yellow[1], yellow[2]);
  EXPECT_EQ(f["-"].fill, "#a0a0a0");

  FlameOptions cool;
  cool.palette = Palette::kCool;
  auto c = by_name(render(g, cool));
  auto cu = rgb(c["user_fn"].fill), ck = rgb(c["kernel_fn"].fill);
  EXPECT_GT(cu[2], cu[0]);  // blue above red and green
  EXPECT_GT(cu[2], cu[1]);
  EXPECT_GT(ck[1], ck[0]);  // green above red and blue
  EXPECT_GT(ck[1], ck[2]);

  // Another graph: the same names keep their colours.
  FlameGraph other;
  std::vector<FlameFrame> o = {{"zzz", FrameKind::kProcess}, {"user_fn", FrameKind::kUser}};
  other.add(o, 1);
  EXPECT_EQ(by_name(render(other))["user_fn"].fill, f["user_fn"].fill);
}

TEST(FlameGraph, CountName) {
  FlameOptions o;
  o.count_name = "us (wall)";  // the script reads the title's last "(...)"
  EXPECT_EQ(by_name(render(graph_of({"a;b 1234567"}), o))["b"].title,
            "b (1,234,567 us [wall], 100.00%)");
}

TEST(FlameGraph, Labels) {
  svg::NameText n = svg::name_text("function");
  EXPECT_EQ(svg::label(n, 100, 7.08), "function");    // 14 fit
  EXPECT_EQ(svg::label(n, 56.64, 7.08), "function");  // exactly 8
  EXPECT_EQ(svg::label(n, 56.63, 7.08), "funct..");
  EXPECT_EQ(svg::label(n, 21.24, 7.08), "f..");
  EXPECT_EQ(svg::label(n, 21.23, 7.08), "");
  // Cut at characters, not bytes.
  EXPECT_EQ(svg::label(svg::name_text("\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5\xc2\xb5"), 28.32, 7.08),
            "\xc2\xb5\xc2\xb5..");
}

TEST(FlameGraph, NameText) {
  EXPECT_EQ(svg::name_text("a\tb\nc").clean, "a?b?c");
  svg::NameText mu = svg::name_text("\xc2\xb5s");
  EXPECT_EQ(mu.clean, "\xc2\xb5s");
  EXPECT_EQ(mu.chars, 2u);
  EXPECT_EQ(svg::name_text("x\xff\xc0\xafy").clean, "x???y");  // not UTF-8, overlong
  EXPECT_EQ(svg::name_text("\xed\xa0\x80").clean, "???");      // a surrogate
  EXPECT_EQ(svg::name_text("\xf0\x9f\x94\xa5").chars, 1u);     // four bytes, one character
  EXPECT_EQ(svg::name_text("trunc\xe2\x82").clean, "trunc??");
  std::string esc;
  svg::append_escaped(esc, "<a & \"b\">");
  EXPECT_EQ(esc, "&lt;a &amp; &quot;b&quot;&gt;");
  EXPECT_EQ(svg::grouped(0), "0");
  EXPECT_EQ(svg::grouped(999), "999");
  EXPECT_EQ(svg::grouped(1000), "1,000");
  EXPECT_EQ(svg::grouped(12345678), "12,345,678");
}

TEST(FlameGraph, Palettes) {
  Palette p = Palette::kHot;
  EXPECT_TRUE(parse_palette("io", &p));
  EXPECT_EQ(p, Palette::kIo);
  EXPECT_TRUE(parse_palette("mem", &p));
  EXPECT_EQ(p, Palette::kMem);
  EXPECT_TRUE(parse_palette("cool", &p));
  EXPECT_EQ(p, Palette::kCool);
  EXPECT_TRUE(parse_palette("hot", &p));
  EXPECT_EQ(p, Palette::kHot);
  EXPECT_FALSE(parse_palette("java", &p));
}

// --- the report (what -o FILE.svg writes) ---

TEST(FlameGraphReport, TitlesAndMerging) {
  report::Report r = report::testing::sample_report();
  std::ostringstream out;
  FlameStats s = write_flamegraph(out, r);
  std::string svg = out.str();
  EXPECT_EQ(flamegraph_title(r), "profile -F 99 -d -o out.svg 5 on testhost");
  EXPECT_EQ(flamegraph_subtitle(r), "431 samples in 5.00 s; 2 events lost, 1 stack truncated");
  EXPECT_NE(svg.find(">profile -F 99 -d -o out.svg 5 on testhost</text>"), std::string::npos);
  EXPECT_EQ(s.stacks, 5u);  // of 6 records: a and a2 print the same and meet in func_a
  auto frames = drawn_frames(svg);
  std::map<std::string, Drawn> f;
  for (const Drawn& d : frames) f[d.title.substr(0, d.title.rfind(" ("))] = d;
  EXPECT_EQ(f["func_a"].title, "func_a (120 samples, 27.84%)");
  EXPECT_EQ(f["func_b"].title, "func_b (300 samples, 69.61%)");
  EXPECT_EQ(f["cpuratio"].title, "cpuratio (427 samples, 99.07%)");
  EXPECT_EQ(f["main"].title, "main (427 samples, 99.07%)");
  EXPECT_EQ(f["-"].fill, "#a0a0a0");
  EXPECT_EQ(f["entry_SYSCALL_64"].fill.substr(5), "00");  // kernel: orange, no blue
  // Every frame of every record drawn at width 0.1 px or more: the
  // smallest record (1 sample) is 2.7 px wide.
  EXPECT_EQ(s.frames_pruned, 0u);
  EXPECT_EQ(s.frames_drawn, frames.size());
}

// Names with <, &, " are escaped in titles and labels; ';' is kept.
TEST(FlameGraphReport, Escaping) {
  std::ostringstream out;
  write_flamegraph(out, report::testing::sample_report());
  std::string svg = out.str();
  EXPECT_NE(svg.find("<title>a&lt;b&gt;&amp;&quot;c&quot; (1 samples, 0.23%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>ns::f&lt;int&gt;(int, char const*) (1 samples, 0.23%)</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>x;y (1 samples, 0.23%)</title>"), std::string::npos);
  EXPECT_NE(svg.find("<title>[unknown] (3 samples, 0.70%)</title>"), std::string::npos);
  // Nothing unescaped between the tags of the frames.
  std::string text = std::regex_replace(frames_section(svg), std::regex("<[^<>]*>"), "");
  EXPECT_EQ(text.find('<'), std::string::npos);
  EXPECT_EQ(text.find('>'), std::string::npos);
  EXPECT_EQ(text.find('"'), std::string::npos);
  for (size_t at = text.find('&'); at != std::string::npos; at = text.find('&', at + 1))
    EXPECT_TRUE(text.compare(at, 4, "&lt;") == 0 || text.compare(at, 4, "&gt;") == 0 ||
                text.compare(at, 5, "&amp;") == 0 || text.compare(at, 6, "&quot;") == 0)
        << text.substr(at, 10);
}

// Whether every character of text is one XML 1.0 allows (its Char
// production: tab, newline, CR, U+0020-U+D7FF, U+E000-U+FFFD,
// U+10000-U+10FFFF, as well-formed UTF-8); the first offending offset in
// *at.
bool xml_chars(const std::string& text, size_t* at) {
  for (size_t i = 0; i < text.size();) {
    Utf8Char u = utf8_char(std::string_view(text).substr(i));
    const char32_t c = u.code;
    if (!u.valid || (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0xfffe ||
        c == 0xffff) {
      *at = i;
      return false;
    }
    i += u.size;
  }
  return true;
}

// xmllint's verdict on text (its exit status and messages), when the host
// has it; nullopt otherwise.
std::optional<std::pair<int, std::string>> xmllint(const std::string& text) {
  if (access("/usr/bin/xmllint", X_OK) != 0) return std::nullopt;
  char path[] = "/tmp/tracekit-svg-test.XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return std::nullopt;
  EXPECT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
  std::string cmd = std::string("/usr/bin/xmllint --noout ") + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string said;
  char buf[512];
  while (p && fgets(buf, sizeof buf, p)) said += buf;
  int status = p ? pclose(p) : -1;
  unlink(path);
  return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, said);
}

// Names and titles with code points XML forbids (U+FFFE, U+FFFF, C0
// controls, a lone surrogate as UTF-8, ill-formed UTF-8), as a comm renamed
// with prctl(PR_SET_NAME) or a --title can hold: the SVG stays well-formed
// (a browser shows an error page for a document that is not), each such
// character drawn as '?'.
TEST(FlameGraphReport, ForbiddenCodePointsAreReplaced) {
  report::Report r = report::testing::sample_report();
  r.command = "profile \xef\xbf\xbe\xef\xbf\xbf -o x.svg";
  r.host = "h\x01\x1b[2J";
  r.records[0].comm = "\xef\xbf\xbf\xef\xbf\xbe" "evil\x02";
  r.records[3].comm = "\xed\xa0\x80\xff\xc0\xaf" "x";
  report::Record odd = r.records[5];
  odd.comm = "c\xef\xbf\xbe";
  odd.kernel = r.frames.stack({{0xffffffff81600000, "f\xef\xbf\xbf\x0b\xed\xbf\xbf", 0, 2}});
  r.records.push_back(odd);
  std::ostringstream out;
  write_flamegraph(out, r);
  const std::string svg = out.str();
  size_t at = 0;
  EXPECT_TRUE(xml_chars(svg, &at)) << "at " << at << ": " << svg.substr(at > 40 ? at - 40 : 0, 80);
  EXPECT_NE(svg.find(">profile ?? -o x.svg on h??[2J</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>??evil? ("), std::string::npos);
  EXPECT_NE(svg.find("<title>??????x ("), std::string::npos);
  EXPECT_NE(svg.find("<title>f????? ("), std::string::npos);
  if (auto verdict = xmllint(svg)) {
    EXPECT_EQ(verdict->first, 0) << verdict->second;
  }

  // The same names through folded input and --title / --subtitle.
  FlameOptions o;
  o.title = "t\xef\xbf\xbf";
  o.subtitle = "s\xef\xbf\xbe\x01";
  std::string plain = render(graph_of({"a\xef\xbf\xbe;b\xef\xbf\xbf 3"}), o);
  EXPECT_TRUE(xml_chars(plain, &at)) << "at " << at;
  EXPECT_NE(plain.find(">t?</text>"), std::string::npos);
  EXPECT_NE(plain.find(">s?" "?</text>"), std::string::npos);
  if (auto verdict = xmllint(plain)) {
    EXPECT_EQ(verdict->first, 0) << verdict->second;
  }
}

TEST(FlameGraphReport, OffCpuTime) {
  report::Report r = report::testing::sample_report(report::Unit::kMicroseconds);
  std::ostringstream out;
  write_flamegraph(out, r);
  EXPECT_NE(out.str().find("<title>func_b (300 \xc2\xb5s, 69.61%)</title>"), std::string::npos);
  EXPECT_EQ(flamegraph_subtitle(r),
            "431 \xc2\xb5s off-CPU in 5.00 s; 2 events lost, 1 stack truncated");
  EXPECT_NE(out.str().find("#e0e8f0"), std::string::npos);  // the cool background
}

TEST(FlameGraphReport, Deterministic) {
  std::ostringstream a, b;
  write_flamegraph(a, report::testing::sample_report());
  write_flamegraph(b, report::testing::sample_report());
  EXPECT_EQ(a.str(), b.str());
}

// --- folded input ---

struct FoldedCase {
  std::string line;
  bool ok;
  uint64_t count;
  std::vector<std::pair<std::string, FrameKind>> frames;
};

TEST(FoldedInput, Lines) {
  using K = FrameKind;
  const FoldedCase cases[] = {
      {"cpuratio;main;func_a 100",
       true,
       100,
       {{"cpuratio", K::kProcess}, {"main", K::kUser}, {"func_a", K::kUser}}},
      {"dd;read;-;entry;clear_user 9",
       true,
       9,
       {{"dd", K::kProcess},
        {"read", K::kUser},
        {"-", K::kDelimiter},
        {"entry", K::kKernel},
        {"clear_user", K::kKernel}}},
      {"dd;read;--;entry 9",
       true,
       9,
       {{"dd", K::kProcess}, {"read", K::kUser}, {"--", K::kDelimiter}, {"entry", K::kKernel}}},
      {"swapper;cpu_idle_[k];default_idle_[k] 3",
       true,
       3,
       {{"swapper", K::kProcess}, {"cpu_idle", K::kKernel}, {"default_idle", K::kKernel}}},
      {"vfs_read_[k];ksys_read_[k] 1",
       true,
       1,
       {{"vfs_read", K::kKernel}, {"ksys_read", K::kKernel}}},
      {"lonely 4", true, 4, {{"lonely", K::kUser}}},
      {"java;Foo::bar_[j] 2", true, 2, {{"java", K::kProcess}, {"Foo::bar_[j]", K::kUser}}},
      {"a b;f(int, char) 7", true, 7, {{"a b", K::kProcess}, {"f(int, char)", K::kUser}}},
      {"a;;b; 5\r", true, 5, {{"a", K::kProcess}, {"b", K::kUser}}},
      {"a;b\t6  ", true, 6, {{"a", K::kProcess}, {"b", K::kUser}}},
      {"a;b 0", true, 0, {{"a", K::kProcess}, {"b", K::kUser}}},
      {"_[k] 1", true, 1, {{"_[k]", K::kUser}}},
      {"no count", false, 0, {}},
      {"a;b", false, 0, {}},
      {"a;b 1.5", false, 0, {}},
      {"a;b -3", false, 0, {}},
      {"a;b 12x", false, 0, {}},
      {"a;b 99999999999999999999999", false, 0, {}},
      {" 5", false, 0, {}},
      {";; 5", false, 0, {}},
      {"", false, 0, {}},
  };
  for (const auto& c : cases) {
    std::vector<FlameFrame> frames;
    uint64_t n = 0;
    ASSERT_EQ(parse_folded_line(c.line, &frames, &n), c.ok) << c.line;
    if (!c.ok) continue;
    EXPECT_EQ(n, c.count) << c.line;
    ASSERT_EQ(frames.size(), c.frames.size()) << c.line;
    for (size_t i = 0; i < frames.size(); ++i) {
      EXPECT_EQ(frames[i].name, c.frames[i].first) << c.line;
      EXPECT_EQ(frames[i].kind, c.frames[i].second) << c.line << " frame " << i;
    }
  }
}

}  // namespace
}  // namespace tracekit::output
