// The multi-call binary: build/bin/<tool> are symlinks to it, and
// "tracekit <tool> args..." works too.
#include <algorithm>
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "session/tool_table.hpp"
#include "cli/version.hpp"

namespace {

using tracekit::session::Tool;

int run(const Tool& e, int argc, char** argv) {
  tracekit::cli::StdoutGuard out(std::string(e.name));
  // A stdout closed at start ("profile 3 >&-"): said at once, exit 1, not
  // after a run whose report has nowhere to go.
  if (tracekit::cli::output_failed()) return out.finish(tracekit::cli::kExitFailure);
  return out.finish(tracekit::session::finish(e.name, e.main(argc, argv)));
}

// The names column: as wide as the longest name, and a space.
size_t name_width() {
  size_t w = 0;
  for (const auto& t : tracekit::session::tools()) {
    w = std::max(w, t.name.size());
    for (auto a : t.aliases) w = std::max(w, a.size());
  }
  return w + 1;
}

void list_row(std::ostream& out, std::string_view name, std::string_view summary) {
  out << "       ";
  out.width(static_cast<std::streamsize>(name_width()));
  out << std::left << name << "# " << summary << "\n";
}

// --list: the names that are links to this binary (tools and their
// aliases), one a line: "for t in $(tracekit --list); do ln -s tracekit $t; done".
int names(std::ostream& out) {
  for (const auto& t : tracekit::session::tools()) {
    if (t.command) continue;
    out << t.name << "\n";
    for (auto a : t.aliases) out << a << "\n";
  }
  return 0;
}

int list(std::ostream& out) {
  out << "USAGE: tracekit TOOL [args...]    (or run TOOL through its symlink)\n"
         "       tracekit --list                (the tools' names, one a line)\n"
         "  tools:\n";
  for (const auto& t : tracekit::session::tools()) {
    if (t.command) continue;
    list_row(out, t.name, t.summary);
    for (auto a : t.aliases) list_row(out, a, std::string(t.name) + ", by another name");
  }
  out << "  commands:\n";
  for (const auto& t : tracekit::session::tools())
    if (t.command) list_row(out, t.name, t.summary);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything opens a file: a closed 0, 1 or 2 would be the number of
  // the first one opened (a perf event became stdout, and the report was
  // written into it).
  if (!tracekit::cli::fill_closed_std_fds()) return tracekit::cli::kExitFailure;
  // First of all: a stop signal that came before the handlers were in place
  // would kill a tool halfway through its set-up (leftovers in tracefs), or,
  // where the parent ignores SIGINT (a background job of a shell), be lost
  // and leave the tool tracing until killed. From here on a stop only sets
  // the flag that every tool's loop checks.
  tracekit::cli::install_stop_handlers();
  std::string_view self = argv[0];
  if (auto slash = self.rfind('/'); slash != std::string_view::npos) self.remove_prefix(slash + 1);
  if (const Tool* t = tracekit::session::find_tool(self)) return run(*t, argc, argv);

  if (argc < 2) return list(std::cerr), 2;
  std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help") {
    tracekit::cli::StdoutGuard out("tracekit");
    return out.finish(list(std::cout));
  }
  if (sub == "--list") {
    tracekit::cli::StdoutGuard out("tracekit");
    return out.finish(names(std::cout));
  }
  if (sub == "--version") {
    tracekit::cli::StdoutGuard out("tracekit");
    std::cout << tracekit::cli::version_line("tracekit") << "\n";
    return out.finish(tracekit::cli::kExitOk);
  }
  if (const Tool* t = tracekit::session::find_tool(sub)) return run(*t, argc - 1, argv + 1);
  if (const Tool* c = tracekit::session::find_command(sub)) return run(*c, argc - 1, argv + 1);
  std::cerr << "tracekit: unknown tool '" << sub << "'\n";
  list(std::cerr);
  return 2;
}
