// The multi-call binary: build/bin/<tool> are symlinks to it, and
// "tracekit <tool> args..." works too.
#include <cstring>
#include <iostream>
#include <string_view>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "cli/signals.hpp"
#include "cli/version.hpp"
#include "tools.hpp"

namespace {

struct Entry {
  const char* name;
  int (*main)(int, char**);
  const char* summary;
};

constexpr Entry kTools[] = {
    {"profile", tracekit::tools::profile_main, "sample on-CPU stacks at a timed interval"},
    {"offcputime", tracekit::tools::offcputime_main, "sum blocked (off-CPU) time by stack"},
    {"stackcount", tracekit::tools::stackcount_main, "count events (functions, tracepoints) by stack"},
    {"stacksnoop", tracekit::tools::stacksnoop_main, "print the kernel stack of every event"},
    {"tpoint", tracekit::tools::tpoint_main, "trace a tracepoint and print its events"},
    {"kprobe", tracekit::tools::kprobe_main, "trace a kernel function (kprobe) and print its events"},
    {"uprobe", tracekit::tools::uprobe_main, "trace a user function (uprobe) and print its events"},
    {"opensnoop", tracekit::tools::opensnoop_main, "trace open()s with file names and descriptors"},
    {"execsnoop", tracekit::tools::execsnoop_main, "trace exec()s with their arguments and parent PIDs"},
    {"syscount", tracekit::tools::syscount_main, "count system calls by process or by name"},
    {"tcpretrans", tracekit::tools::tcpretrans_main, "trace TCP retransmits with addresses, ports and state"},
    {"iosnoop", tracekit::tools::iosnoop_main, "trace block device I/O with latency"},
    {"iolatency", tracekit::tools::iolatency_main, "summarize block I/O latency as a histogram"},
    {"killsnoop", tracekit::tools::killsnoop_main, "trace kill()s, tkill()s and tgkill()s with signals and results"},
    {"funccount", tracekit::tools::funccount_main, "count kernel function calls (or events), in the kernel"},
    {"bitesize", tracekit::tools::bitesize_main, "histogram of block I/O sizes, counted in the kernel"},
    {"cachestat", tracekit::tools::cachestat_main, "page cache hits and misses per interval"},
    {"functrace", tracekit::tools::functrace_main, "trace kernel function calls (function tracer)"},
    {"funcgraph", tracekit::tools::funcgraph_main, "trace a kernel function's child calls as a graph"},
    {"funcslower", tracekit::tools::funcslower_main, "show kernel function calls slower than a threshold"},
    {"reset-tracing", tracekit::tools::reset_tracing_main, "remove what killed runs left in tracefs"},
    // perf-tools' name, which users type (a link of its own: see the Makefile).
    {"reset-ftrace", tracekit::tools::reset_tracing_main, "reset-tracing, by perf-tools' name"},
};

// Commands of the multi-call binary itself ("tracekit features"), with no
// symlink of their own.
constexpr Entry kCommands[] = {
    {"features", tracekit::tools::features_main,
     "the kernel features the tools use, and what works here"},
    {"flamegraph", tracekit::tools::flamegraph_main,
     "folded stacks (-f output) to an interactive flame graph SVG"},
};

const Entry* find(std::string_view name) {
  for (const auto& e : kTools)
    if (name == e.name) return &e;
  return nullptr;
}

// Every tool's stdout goes through one StdoutGuard: a write that fails is
// reported and fails the run, whichever tool wrote it.
int run(const Entry& e, int argc, char** argv) {
  tracekit::cli::StdoutGuard out(e.name);
  // A stdout closed at start ("profile 3 >&-"): said at once, exit 1, not
  // after a run whose report has nowhere to go.
  if (tracekit::cli::output_failed()) return out.finish(tracekit::cli::kExitFailure);
  return out.finish(e.main(argc, argv));
}

int list(std::ostream& out) {
  out << "USAGE: tracekit TOOL [args...]    (or run TOOL through its symlink)\n"
         "  tools:\n";
  for (const auto& e : kTools) {
    out << "       ";
    out.width(14);
    out << std::left << e.name << "# " << e.summary << "\n";
  }
  out << "  commands:\n";
  for (const auto& e : kCommands) {
    out << "       ";
    out.width(14);
    out << std::left << e.name << "# " << e.summary << "\n";
  }
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
  if (const Entry* e = find(self)) return run(*e, argc, argv);

  if (argc < 2) return list(std::cerr), 2;
  std::string_view sub = argv[1];
  if (sub == "-h" || sub == "--help") {
    tracekit::cli::StdoutGuard out("tracekit");
    return out.finish(list(std::cout));
  }
  if (sub == "--version") {
    tracekit::cli::StdoutGuard out("tracekit");
    std::cout << tracekit::cli::version_line("tracekit") << "\n";
    return out.finish(tracekit::cli::kExitOk);
  }
  if (const Entry* e = find(sub)) return run(*e, argc - 1, argv + 1);
  for (const auto& c : kCommands)
    if (sub == c.name) return run(c, argc - 1, argv + 1);
  std::cerr << "tracekit: unknown tool '" << sub << "'\n";
  list(std::cerr);
  return 2;
}
