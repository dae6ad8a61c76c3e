// Writing tracefs control files: write_control() and the kernel's
// explanations of refused writes (error_log), the removal commands of
// triggers, the dropped-events count of a stats file. Instance
// (instance.cpp) writes through these.
//
// Explaining failures: the kernel often says more in error_log than errno
// does ("Field not found" for a bad filter). write_control() reads the
// error_log files before writing and, when the write fails, takes the entry
// the failure added. Instances have their own error_log (filter and trigger
// errors land there); probe definitions log at the top level.

#include "tracefs/instance.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <iostream>

#include "feature_table/feature_table.hpp"
#include "util/exit_writes.hpp"
#include "util/fd.hpp"
#include "util/safe_file.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

namespace {

std::vector<std::string>* g_write_log = nullptr;

void record(const std::string& line) {
  if (g_write_log) g_write_log->push_back(line);
}

// error_log content, "" when it cannot be read (kernels before 5.2 have
// none; TRACEKIT_KERNEL_FEATURES=-error_log acts as one of those).
std::string read_error_log(const std::string& dir) {
  if (kernel::forced_off(kernel::Feature::kErrorLog)) return {};
  auto text = read_file(dir + "/error_log");
  return text ? *text : std::string();
}

}  // namespace

void note_write(const std::string& line) { record(line); }

std::string parse_last_error_log(std::string_view error_log) {
  // An entry is "[ ts] subsystem: error: text", "  Command: cmd", and a line
  // with a caret under the offending token.
  auto lines = split(error_log, '\n');
  size_t start = lines.size();
  for (size_t i = lines.size(); i-- > 0;)
    if (!lines[i].empty() && lines[i][0] == '[') {
      start = i;
      break;
    }
  if (start == lines.size()) return {};
  std::string_view head = lines[start];
  if (auto close = head.find(']'); close != std::string_view::npos) head.remove_prefix(close + 1);
  std::string out(trim(head));
  for (size_t i = start + 1; i < lines.size(); ++i) {
    auto l = trim(lines[i]);
    if (l.rfind("Command:", 0) == 0) out += " (command: " + std::string(trim(l.substr(8))) + ")";
  }
  return out;
}

std::string last_error_log(const std::string& tracing_dir) {
  return parse_last_error_log(read_error_log(tracing_dir));
}

void record_writes(std::vector<std::string>* log) { g_write_log = log; }

Status remove_dir(const std::string& path) {
  record("rmdir " + path);
  if (rmdir(path.c_str()) != 0) return Error::from_errno("cannot remove", path);
  return {};
}

// Whether a write to this control file can add an entry to error_log: the
// kernel logs (tracing_log_err) from event filters, triggers (hist ones
// included) and the dynamic event definitions only. Writes to the others
// (enable, options, buffer sizes, pid lists) skip reading the error_log
// files before them: two reads a write, 720 of the 1,100 system calls that
// enabling 360 tracepoints took.
static bool may_log_error(std::string_view path) {
  std::string_view base = path.substr(path.rfind('/') + 1);
  for (std::string_view f : {"filter", "trigger", "kprobe_events", "uprobe_events",
                             "dynamic_events", "synthetic_events"})
    if (base == f) return true;
  return false;
}

Status write_control(const std::string& path, const std::string& text, bool append,
                     const std::vector<std::string>& log_dirs_asked) {
  record(std::string(append ? "append " : "write ") + path + " " + text);
  static const std::vector<std::string> kNone;
  const std::vector<std::string>& log_dirs = may_log_error(path) ? log_dirs_asked : kNone;
  std::vector<std::string> before;
  for (const auto& d : log_dirs) before.push_back(read_error_log(d));

  std::string data = text;
  if (!data.empty() && data.back() != '\n') data += '\n';
  int err = 0;
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
  if (fd < 0) {
    err = errno;
  } else {
    // One write: the kernel parses each write(2) as a whole command. Files
    // parsed word by word (set_ftrace_filter, set_graph_function, set_event:
    // the kernel's trace_parser) take one word per write(2) and return what
    // they consumed: the rest is written again, as echo(1) does (one write
    // of "vfs_read vfs_readv" failed here before, for stackcount's and
    // funccount's function-tracer ways with a glob).
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        err = errno;
        break;
      }
      if (n == 0) {
        err = EIO;
        break;
      }
      done += static_cast<size_t>(n);
    }
    if (close(fd) != 0 && err == 0) err = errno;
  }
  if (err == 0) return {};

  std::string kernel_says;
  for (size_t i = 0; i < log_dirs.size() && kernel_says.empty(); ++i) {
    std::string after = read_error_log(log_dirs[i]);
    if (after != before[i]) kernel_says = parse_last_error_log(after);
  }
  std::string shown = elide(trim(text));  // a 100 KB filter was echoed whole
  return Error{err, "cannot write \"" + shown + "\"", path,
               kernel_says.empty() ? "" : "error_log: " + kernel_says};
}

std::string trigger_removal(std::string_view line) {
  line = trim(line);
  if (line.empty() || line[0] == '#') return {};
  if (line[0] == '!') line.remove_prefix(1);
  // The filter is not part of what identifies a trigger.
  if (auto pos = line.find(" if "); pos != std::string_view::npos) line = line.substr(0, pos);
  line = trim(line);
  // hist triggers list their state after the definition.
  for (std::string_view state : {" [active]", " [paused]"})
    if (line.size() >= state.size() && line.substr(line.size() - state.size()) == state)
      line.remove_suffix(state.size());
  line = trim(line);
  if (line.rfind("hist", 0) == 0) return "!" + std::string(line);
  // Other commands end in an optional count: ":unlimited" and ":count=N" as
  // the kernel lists them, ":N" as they are written.
  if (auto colon = line.rfind(':'); colon != std::string_view::npos) {
    auto last = line.substr(colon + 1);
    if (last == "unlimited" || last.rfind("count=", 0) == 0 || parse_int<unsigned long>(last))
      line = line.substr(0, colon);
  }
  return "!" + std::string(line);
}

std::optional<uint64_t> parse_dropped_events(std::string_view stats) {
  constexpr std::string_view key = "dropped events:";
  for (auto l : split(stats, '\n')) {
    l = trim(l);
    if (l.rfind(key, 0) == 0) return parse_int<uint64_t>(trim(l.substr(key.size())));
  }
  return std::nullopt;
}

}  // namespace tracekit::tracefs
