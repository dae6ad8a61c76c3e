// Output files of the stack tools: `-o FILE` (repeatable) writes the report
// to FILE as well as to stdout, in the format FILE's extension names, or the
// one --format names:
//
//   .svg              svg         interactive flame graph, self-contained
//   .pb.gz, .pprof    pprof       pprof's profile.proto, gzipped
//   .speedscope.json  speedscope  speedscope's file format
//   .json             json        tracekit's JSON report
//   .folded           folded      folded stacks (as -f prints them)
//   .txt              txt         the multi-line report (as stdout without -f)
//
// Every file renders from the same report::Report as stdout
// (output/files.hpp renders and writes them). A file is
// written whole or not at all: into a temporary file beside it, renamed over
// FILE when complete, so a reader (or an interval report that rewrites it)
// never sees part of one. A FILE that exists and is no regular file (a
// FIFO, /dev/stdout) is written in place.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/report.hpp"
#include "util/result.hpp"

namespace tracekit::cli {
class Command;
}

namespace tracekit::report {

enum class Format { kSvg, kPprof, kSpeedscope, kJson, kFolded, kText };

// "svg", "pprof", "speedscope", "json", "folded", "txt" (also "text").
std::optional<Format> format_named(std::string_view name);
// From the path's extension (see above); nullopt for any other.
std::optional<Format> format_of_path(std::string_view path);
const char* format_name(Format f);
// What a format is, for the "wrote FILE (...)" line: "flame graph", ...
const char* format_title(Format f);

struct OutputFile {
  std::string path;
  Format format = Format::kText;
};

// The output options of a stack tool's command line, and what the files'
// reports say of the run.
struct OutputOptions {
  std::vector<OutputFile> files;
  std::string command;  // the command line as typed, for titles
};

// -o FILE and --format FORMAT on a tool's command line.
class OutputArgs {
 public:
  // Declares -o/--output and --format on cmd.
  void declare(cli::Command& cmd);
  // After a successful parse: the files with their formats, and the command
  // line (argv[0]'s basename as the tool's name, then the arguments, quoted
  // for a shell where needed). nullopt: go on; else the usage error's exit
  // code: 2 for a usage error (a name with no known extension and no
  // --format; an unknown --format; --format without -o), 1 for a file that
  // cannot be written (a missing directory, a directory, no permission),
  // checked now so that a typo does not cost a whole run.
  std::optional<int> resolve(const cli::Command& cmd, int argc, char** argv, OutputOptions* out);

 private:
  std::vector<std::string> paths_;
  std::string format_;
};

// The command line as a shell would take it back: the tool's name (the
// basename of argv[0], or "tracekit NAME" after the multi-call name), then
// each argument, single-quoted when it holds anything but [A-Za-z0-9_,.:/=+-].
std::string command_line(const std::string& tool, int argc, char** argv);

// The host's name (uname's nodename).
std::string host_name();

// The wall clock now, ns since the epoch (a report's start_unix_ns).
int64_t unix_now_ns();

// Why a -o file cannot be written, as the tools say it: the message
// (unless it only says "cannot open"), errno's text and the hint. A
// directory on the way that is missing is named ("/tmp/x: No such file or
// directory").
std::string why_not_written(const Error& e, const std::string& path);

}  // namespace tracekit::report
