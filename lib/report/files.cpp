#include "report/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <time.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <ostream>
#include <sstream>

#include "cli/command.hpp"
#include "cli/output.hpp"
#include "util/safe_file.hpp"
#include "output/flamegraph.hpp"
#include "output/json_report.hpp"
#include "output/pprof.hpp"
#include "output/speedscope.hpp"

namespace tracekit::report {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Why a -o file cannot be written, as the tools say it: the message
// (unless it only says "cannot open"), errno's text and the hint.
// A directory on the way that is missing is named ("/tmp/x: No such file
// or directory").
std::string why_not(const Error& e, const std::string& path) {
  std::string why = e.message == "cannot open" ? "" : e.message;
  if (why.empty() && !e.path.empty() && e.path != path) why = e.path;
  if (e.err) why += (why.empty() ? "" : ": ") + std::string(std::strerror(e.err));
  if (!e.hint.empty()) why += " (" + e.hint + ")";
  return why;
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

std::string human_size(uint64_t bytes) {
  char buf[32];
  if (bytes < 10 * 1024)
    std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(bytes));
  else if (bytes < 10 * 1024 * 1024)
    std::snprintf(buf, sizeof buf, "%llu KiB", static_cast<unsigned long long>(bytes / 1024));
  else
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

// The records as the text formats print them: merged by text, biggest last.
std::vector<output::Record> text_records(const Report& r, const output::Style& style) {
  std::vector<output::Record> records = r.records;
  output::merge_same_text(records, r.frames, style);
  output::sort_by_value(records);
  return records;
}

std::string stacks_note(size_t n) { return std::to_string(n) + (n == 1 ? " stack" : " stacks"); }

}  // namespace

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
      std::cerr << cmd.name() << ": cannot write '" << path << "': " << why_not(ok.error(), path) << "\n";
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

std::string render(std::ostream& out, const Report& r, Format f) {
  switch (f) {
    case Format::kText: {
      auto records = text_records(r, r.style);
      output::render_multiline(out, records, r.frames, r.style);
      return stacks_note(records.size());
    }
    case Format::kFolded: {
      output::Style style = r.style;
      style.addresses = false;  // folded lines never carry addresses
      auto records = text_records(r, style);
      output::render_folded(out, records, r.frames, style);
      return stacks_note(records.size());
    }
    case Format::kPprof:
      // Not merged: pprof keeps each address as a location of its own.
      output::write_pprof(out, r);
      return stacks_note(r.records.size());
    case Format::kSpeedscope:
      output::write_speedscope(out, r);
      return stacks_note(text_records(r, r.style).size());
    case Format::kJson:
      output::write_json(out, r);
      return stacks_note(text_records(r, r.style).size());
    case Format::kSvg: {
      output::FlameStats st = output::write_flamegraph(out, r);
      std::string note = stacks_note(st.stacks) + ", " + std::to_string(st.frames_drawn) +
                         " frames drawn";
      if (st.frames_pruned > 0)
        note += ", " + std::to_string(st.frames_pruned) + " narrower than 0.1 px left out";
      return note;
    }
  }
  return "";
}

bool write_files(const Report& r, const std::vector<OutputFile>& files, std::ostream& err) {
  bool ok = true;
  for (const OutputFile& file : files) {
    // Root on a shared host: no symlink or FIFO another user planted is
    // followed or opened (util/safe_file.hpp); a regular file is replaced
    // by a fresh one renamed over it, a device or FIFO written in place.
    std::string note;
    uint64_t size = 0;
    bool in_place = false;
    Status done = [&]() -> Status {
      auto w = OutputWriter::open(file.path);
      if (!w) return w.error();
      in_place = w->in_place();
      note = render(w->stream(), r, file.format);
      if (auto s = w->commit(); !s) return s;
      size = w->bytes_written();
      return {};
    }();
    if (!done) {
      err << r.tool << ": cannot write " << file.path << ": " << why_not(done.error(), file.path) << "\n";
      cli::note_output_file_failed();
      ok = false;
      continue;
    }
    err << r.tool << ": wrote " << file.path << " (" << format_title(file.format) << ", " << note;
    if (!in_place) err << ", " << human_size(size);
    err << ")\n";
  }
  return ok;
}

}  // namespace tracekit::report
