// tracekit flamegraph: folded stacks (a file or standard input) to an
// interactive flame graph SVG on standard output, with flamegraph.pl's main
// options; --diff BEFORE AFTER draws the differential graph of two folded
// profiles, as difffolded.pl and flamegraph.pl do. Lines that do not parse
// are counted and reported, not fatal.
#include "output/flamegraph.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "session/tool_table.hpp"
#include "output/folded_input.hpp"

namespace tracekit::tools {

namespace {

constexpr const char* kName = "tracekit flamegraph";

// One input's text, and what of it did not parse.
struct Input {
  std::string path;  // "-": standard input
  std::string text;
  uint64_t total = 0;
  size_t bad = 0;
  size_t first_bad = 0;  // its line number
};

// The whole input, read with read(2): iostreams take several times as long
// on inputs of tens of MB. False with errno set when it cannot be read.
bool read_input(Input& in) {
  int fd = in.path == "-" ? 0 : ::open(in.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = true;
  size_t used = 0;
  in.text.resize(1 << 20);
  for (;;) {
    if (used == in.text.size()) in.text.resize(in.text.size() * 2);
    ssize_t n = ::read(fd, in.text.data() + used, in.text.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    used += static_cast<size_t>(n);
  }
  int saved = errno;
  if (fd != 0) ::close(fd);
  errno = saved;
  in.text.resize(used);
  return ok;
}

// Calls fn(frames, count) for each stack of in, root first (leaf first
// under reverse), counting the lines that do not parse. Blank lines are
// skipped silently.
template <class Fn>
void each_stack(Input& in, bool reverse, Fn fn) {
  std::vector<output::FlameFrame> frames;
  std::string_view text = in.text;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    uint64_t count = 0;
    if (!output::parse_folded_line(line, &frames, &count)) {
      if (in.bad++ == 0) in.first_bad = line_no;
      continue;
    }
    if (reverse) std::reverse(frames.begin(), frames.end());
    fn(frames, count);
  }
}

void report_bad(const Input& in) {
  if (in.bad == 0) return;
  std::cerr << kName << ": " << in.bad << (in.bad == 1 ? " line" : " lines") << " of "
            << (in.path == "-" ? "standard input" : in.path)
            << " not in the folded format (\"frame;frame;... COUNT\"), skipped; the first: line "
            << in.first_bad << "\n";
}

}  // namespace

session::Outcome flamegraph_main(int argc, char** argv) {
  output::FlameOptions o;
  std::string title, colors = "hot", minwidth = "0.1";
  bool inverted = false, reverse = false, diff = false, normalize = false;
  std::optional<std::string> first, second;
  cli::Command cmd(kName,
                   "[-h] [--title T] [--subtitle T] [--colors hot|io|mem|cool]\n"
                   "[--inverted] [--reverse] [--width PX] [--minwidth PX|N%]\n"
                   "[--countname NAME] [FILE | --diff [--normalize] BEFORE AFTER]");
  cmd.option("title", &title, "T", "the title (default \"Flame Graph\", \"Icicle Graph\" inverted)")
      .option("subtitle", &o.subtitle, "T", "a second line under the title")
      .option("colors", &colors, "PALETTE", "hot (default), io, mem or cool")
      .flag("inverted", &inverted, "icicle graph: the roots at the top")
      .flag("reverse", &reverse, "reverse each stack (leaf first) before merging")
      .option("width", &o.width, "PX", "the image's width (default 1200)")
      .option("minwidth", &minwidth, "PX",
              "frames narrower than this are not drawn (default 0.1);\n"
              "N% for a share of the total")
      .option("countname", &o.count_name, "NAME", "what the counts are (default samples)")
      .flag("diff", &diff,
            "differential graph: widths from AFTER, red where a frame's\n"
            "own count grew, blue where it shrank")
      .flag("normalize", &normalize, "with --diff: scale BEFORE's counts to AFTER's total")
      .positional("FILE", &first, "folded stacks (default: standard input); with --diff, BEFORE")
      .positional("AFTER", &second, "with --diff: the folded stacks after")
      .example("profile -F 99 -f 10 > out.folded", "folded stacks, 10 seconds")
      .example("tracekit flamegraph < out.folded > out.svg", "an interactive flame graph")
      .example("tracekit flamegraph --colors cool --countname us < off.folded > off.svg",
               "off-CPU time")
      .example("tracekit flamegraph --diff before.folded after.folded > diff.svg", "what changed");
  if (auto code = cmd.parse(argc, argv)) return *code;

  if (!output::parse_palette(colors, &o.palette))
    return cmd.usage_error("invalid value '" + colors + "' for --colors (hot, io, mem, cool)");
  if (!(o.width > 40)) return cmd.usage_error("--width needs more than 40 px");
  bool percent = !minwidth.empty() && minwidth.back() == '%';
  char* end = nullptr;
  std::string mw = percent ? minwidth.substr(0, minwidth.size() - 1) : minwidth;
  double min_width = std::strtod(mw.c_str(), &end);
  if (mw.empty() || *end != '\0' || !(min_width >= 0) || !std::isfinite(min_width) ||
      (percent && min_width > 100))
    return cmd.usage_error("invalid value '" + minwidth + "' for --minwidth");
  o.min_width = percent ? (o.width - 20) * min_width / 100 : min_width;
  if (diff && !second) return cmd.usage_error("--diff needs two files: BEFORE AFTER");
  if (!diff && second) return cmd.usage_error("unexpected argument '" + *second + "'");
  if (normalize && !diff) return cmd.usage_error("--normalize goes with --diff");
  o.inverted = inverted;
  o.differential = diff;
  o.title = cmd.given("title") ? title : inverted ? "Icicle Graph" : "Flame Graph";

  std::vector<Input> inputs(diff ? 2 : 1);
  inputs[0].path = first.value_or("-");
  if (diff) inputs[1].path = *second;
  for (Input& in : inputs) {
    if (!read_input(in)) {
      std::cerr << kName << ": cannot read "
                << (in.path == "-" ? "standard input" : "'" + in.path + "'") << ": "
                << std::strerror(errno) << "\n";
      return cli::kExitFailure;
    }
  }

  output::FlameGraph graph;
  if (!diff) {
    each_stack(inputs[0], reverse, [&](const auto& frames, uint64_t n) { graph.add(frames, n); });
  } else {
    // BEFORE's stacks add to the nodes' before values, AFTER's to their
    // values: a stack in both meets itself in the tree.
    for (Input& in : inputs)
      each_stack(in, reverse, [&](const auto&, uint64_t n) { in.total += n; });
    for (Input& in : inputs) in.bad = 0;
    double scale = normalize && inputs[0].total > 0
                       ? static_cast<double>(inputs[1].total) / static_cast<double>(inputs[0].total)
                       : 1.0;
    each_stack(inputs[0], reverse, [&](const auto& frames, uint64_t n) {
      graph.add(frames, 0, static_cast<uint64_t>(std::llround(static_cast<double>(n) * scale)));
    });
    each_stack(inputs[1], reverse,
               [&](const auto& frames, uint64_t n) { graph.add(frames, n, 0); });
  }
  for (const Input& in : inputs) report_bad(in);
  if (graph.total() == 0)
    std::cerr << kName << ": no stacks with a count above 0; the graph is empty\n";
  output::render_flamegraph(std::cout, graph, o);
  return cli::kExitOk;
}

}  // namespace tracekit::tools

// The tool table's row (session/tool_table.hpp): a command of the multi-call
// binary, with no symlink.
namespace tracekit::tools {
namespace {
const session::RegisterTool kTool{{
    .name = "flamegraph",
    .summary = "folded stacks (-f output) to an interactive flame graph SVG",
    .main = flamegraph_main,
    .command = true,
}};
}  // namespace
}  // namespace tracekit::tools
