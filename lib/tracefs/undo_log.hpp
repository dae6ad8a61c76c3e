// Changes to tracefs control files, each remembered with the write that
// undoes it: what a private instance (tracefs/instance.hpp) and the
// top-level guard (tracefs/top_level.hpp) are built on.
//
// A change is pushed only once the kernel accepted it; undo() replays the
// undo writes newest first, each step that fails reported on stderr
// ("tracekit: cleanup: ...") and the rest still done. Writes that fail
// carry the kernel's error_log line (see write_control()).
#pragma once

#include <string>
#include <vector>

#include "util/fd.hpp"
#include "util/result.hpp"

namespace tracekit::tracefs {

class UndoLog {
 public:
  // dir: the directory the relative paths are in. log_dirs: where the
  // kernel may explain a failed write (error_log), nearest first.
  UndoLog(std::string dir, std::vector<std::string> log_dirs);
  UndoLog(UndoLog&& o) noexcept;  // o is left empty: it undoes nothing
  UndoLog& operator=(UndoLog&&) = delete;
  UndoLog(const UndoLog&) = delete;

  const std::string& dir() const { return dir_; }
  bool has(const std::string& rel) const;
  Result<std::string> read(const std::string& rel) const;

  // Raw writes, not undone: write() truncates, append() appends.
  Status write(const std::string& rel, const std::string& text) const;
  Status append(const std::string& rel, const std::string& text) const;

  // The generic undoable setter, for a file that holds one value (tracing_on,
  // options/*, current_tracer, trace_clock, buffer_percent, tracing_thresh,
  // function_profile_enabled, ...): reads the value before (of a choice list
  // such as trace_clock's "[local] global", the bracketed one), writes value,
  // and pushes the write of the value before (also stored in *before when
  // given). Error: no such file (ENOENT), or the kernel refused the value.
  Status set(const std::string& rel, const std::string& value, std::string* before = nullptr);
  // Writes text (truncating, or appending) and, once the kernel accepted
  // it, pushes a write of undo_text (truncating, or appending): for files
  // whose undo is not the value before (a filter is cleared by "0", a
  // trigger removed by appending "!trigger", a list emptied by truncation).
  Status change(const std::string& rel, const std::string& text, bool append,
                const std::string& undo_text, bool undo_append);

  // The undo writes pushed so far whose path ends in suffix.
  size_t count_pushed(const std::string& suffix) const;
  // Replays every undo write, newest first, and forgets them (and removes
  // the journal, if one is kept, and its directory if that is left empty).
  void undo();

  // Also keeps every undo write in a journal file at path (created now,
  // exclusively, mode 0600, one step a line), so that when this process is
  // killed before it can undo, the next user can (replay_journal()): for
  // the top level, which no rmdir cleans up. path's directory must be one
  // only we can write to (util/safe_file.hpp private_dir): a journal left
  // there by a dead run with our PID is replaced.
  Status keep_journal(const std::string& path);

 private:
  struct Step {
    std::string rel;
    std::string text;
    bool append;
  };
  std::string dir_;
  std::vector<std::string> log_dirs_;
  std::vector<Step> steps_;
  std::string journal_;
  Fd journal_fd_;
};

// Replays the undo writes of a journal a killed process left
// (UndoLog::keep_journal) into tracing_dir, newest first, quietly (some may
// have been done already), and removes it. Returns how many writes the
// kernel accepted; 0 when there is no journal. Only a journal we could
// have written is replayed (a regular file of ours, one link, writable by
// us only, at most 1 MiB), and only steps whose paths stay inside
// tracing_dir (no "..", no absolute path).
size_t replay_journal(const std::string& path, const std::string& tracing_dir);

// The value a single-value control file shows: its text trimmed, or of a
// choice list ("[local] global counter"), the bracketed choice; of a buffer
// size the kernel has not allocated yet ("7 (expanded: 1408)"), the size it
// will have (1408). Pure.
std::string current_value(std::string_view text);

}  // namespace tracekit::tracefs
