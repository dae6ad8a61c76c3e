#include "report/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <ostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "util/safe_file.hpp"

namespace tracekit::report {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool shell_safe(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::strchr("_,.:/=+-", c) != nullptr;
    if (!ok) return false;
  }
  return true;
}

std::string quoted(std::string_view s) {
  if (shell_safe(s)) return std::string(s);
  std::string q = "'";
  for (char c : s) {
    if (c == '\'')
      q += "'\\''";
    else
      q += c;
  }
  return q + "'";
}

}  // namespace

std::string why_not_written(const Error& e, const std::string& path) {
  std::string why = e.message == "cannot open" ? "" : e.message;
  if (why.empty() && !e.path.empty() && e.path != path) why = e.path;
  if (e.err) why += (why.empty() ? "" : ": ") + std::string(std::strerror(e.err));
  if (!e.hint.empty()) why += " (" + e.hint + ")";
  return why;
}

std::optional<Format> format_named(std::string_view name) {
  if (name == "svg") return Format::kSvg;
  if (name == "pprof") return Format::kPprof;
  if (name == "speedscope") return Format::kSpeedscope;
  if (name == "json") return Format::kJson;
  if (name == "folded") return Format::kFolded;
  if (name == "txt" || name == "text") return Format::kText;
  return std::nullopt;
}

std::optional<Format> format_of_path(std::string_view path) {
  // The longest suffixes first: ".speedscope.json" before ".json".
  if (ends_with(path, ".speedscope.json")) return Format::kSpeedscope;
  if (ends_with(path, ".pb.gz") || ends_with(path, ".pprof")) return Format::kPprof;
  if (ends_with(path, ".svg")) return Format::kSvg;
  if (ends_with(path, ".json")) return Format::kJson;
  if (ends_with(path, ".folded")) return Format::kFolded;
  if (ends_with(path, ".txt")) return Format::kText;
  return std::nullopt;
}

const char* format_name(Format f) {
  switch (f) {
    case Format::kSvg: return "svg";
    case Format::kPprof: return "pprof";
    case Format::kSpeedscope: return "speedscope";
    case Format::kJson: return "json";
    case Format::kFolded: return "folded";
    case Format::kText: return "txt";
  }
  return "";
}

const char* format_title(Format f) {
  switch (f) {
    case Format::kSvg: return "flame graph";
    case Format::kPprof: return "pprof profile";
    case Format::kSpeedscope: return "speedscope profile";
    case Format::kJson: return "JSON report";
    case Format::kFolded: return "folded stacks";
    case Format::kText: return "text report";
  }
  return "";
}

void OutputArgs::declare(cli::Command& cmd) {
  cmd.option("o,output", &paths_, "FILE",
             "also write the report to FILE (repeatable), in the format\n"
             "its name ends with: .svg .pb.gz .pprof .speedscope.json\n"
             ".json .folded .txt")
      .option("format", &format_, "FORMAT",
              "the -o files' format, whatever their names: svg,\n"
              "pprof, speedscope, json, folded or txt");
}

std::optional<int> OutputArgs::resolve(const cli::Command& cmd, int argc, char** argv,
                                       OutputOptions* out) {
  std::optional<Format> forced;
  if (cmd.given("format")) {
    forced = format_named(format_);
    if (!forced)
      return cmd.usage_error("unknown format '" + format_ +
                             "' (svg, pprof, speedscope, json, folded, txt)");
    if (paths_.empty()) return cmd.usage_error("--format names the format of -o files: add -o FILE");
  }
  out->files.clear();
  for (const std::string& path : paths_) {
    std::optional<Format> f = forced ? forced : format_of_path(path);
    if (!f)
      return cmd.usage_error("cannot tell the format of '" + path +
                             "' from its name (.svg .pb.gz .pprof .speedscope.json .json "
                             ".folded .txt): add --format");
    // Not a usage error: the command line is right, the file system says no.
    if (auto ok = OutputWriter::check(path); !ok) {
      std::cerr << cmd.name() << ": cannot write '" << path
                << "': " << why_not_written(ok.error(), path) << "\n";
      return cli::kExitFailure;
    }
    out->files.push_back({path, *f});
  }
  out->command = command_line(cmd.name(), argc, argv);
  return std::nullopt;
}

std::string command_line(const std::string& tool, int argc, char** argv) {
  std::string s = tool;
  for (int i = 1; i < argc; ++i) s += " " + quoted(argv[i]);
  return s;
}

std::string host_name() {
  struct utsname u {};
  if (uname(&u) != 0) return "";
  return u.nodename;
}

int64_t unix_now_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

}  // namespace tracekit::report
