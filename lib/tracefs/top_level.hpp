// The top-level guard: the one way to change tracefs settings that exist only
// at the top level (function_profile_enabled, tracing_thresh, the options/*
// that instances lack), which every user of ftrace on the host shares.
//
// The guard first takes the ftrace lock, the file perf-tools' scripts use
// (/var/tmp/.ftrace-lock, holding the holder's PID): it is created
// exclusively with our PID in it, so perf-tools refuses to start while we
// hold it ("ftrace may be in use by PID ..."), and we refuse while a live
// perf-tools script (or another guard) holds it, naming its PID. A lock left
// by a process that is gone (killed before it could remove it) is taken
// over. /var/tmp is anyone's to write to: a lock counts only as a regular
// file root made; a symlink, FIFO or user's file planted at its name is
// removed, never followed, blocked on or read beyond a PID's worth.
// Changes go through the same undo log as an instance's
// (tracefs/undo_log.hpp), undone when the guard is destroyed, newest first;
// then the lock is removed. Single-value restores are also registered for an
// abrupt exit (util/exit_writes.hpp), as an instance's tracing_on is.
#pragma once

#include <string>
#include <vector>

#include "tracefs/undo_log.hpp"
#include "util/result.hpp"

namespace tracekit::tracefs {

// perf-tools' lock file.
inline constexpr const char* kFtraceLock = "/var/tmp/.ftrace-lock";
// Where the top level's undo journals are kept: a directory only root can
// write to (never beside the lock in /var/tmp, where any user could plant
// one for reset-tracing to replay). On tmpfs: what it undoes does not
// outlive a boot either.
inline constexpr const char* kJournalDir = "/run/tracekit";

class TopLevel {
 public:
  // Takes the lock at lock_path for tracing_dir's top level. Error: EBUSY
  // naming the live holder's PID; or the lock cannot be written.
  static Result<TopLevel> acquire(const std::string& tracing_dir,
                                  const std::string& lock_path = kFtraceLock);
  TopLevel(TopLevel&& o) noexcept;
  TopLevel& operator=(TopLevel&&) = delete;
  TopLevel(const TopLevel&) = delete;
  // Undoes every change, newest first, then removes the lock (if it still
  // holds our PID).
  ~TopLevel();

  const std::string& tracing_dir() const { return log_.dir(); }
  Result<std::string> read(const std::string& rel) const { return log_.read(rel); }
  bool has(const std::string& rel) const { return log_.has(rel); }

  // The generic undoable setter (UndoLog::set), for function_profile_enabled,
  // tracing_thresh and the like.
  Status set(const std::string& rel, const std::string& value);
  // options/<option> to 1 or 0, restored at the end. Error: no such option.
  Status set_option(const std::string& option, bool on);

 private:
  TopLevel(const std::string& tracing_dir, std::string lock_path);
  UndoLog log_;
  std::string lock_path_;  // "" once moved from
  std::vector<int> exit_slots_;
};

// The directory of the undo journals of the lock at lock_path: kJournalDir
// for perf-tools' lock, lock_path + ".journals" for another (a test's
// private one). Made with private_dir() before a journal is kept. Pure.
std::string journal_dir(const std::string& lock_path);

// The undo journal (UndoLog::keep_journal) of the top level used by pid under
// the lock at lock_path: journal_dir(lock_path) + "/top-level." + pid. A
// killed holder's is replayed by whoever takes the lock over (acquire(),
// remove_lock()), into their own tracing directory. Pure.
std::string top_level_journal(const std::string& lock_path, int pid);

// The holder a lock file's text names: its PID, 0 when the text holds none. Pure.
int lock_holder(std::string_view text);

// For reset-tracing: removes the lock at lock_path when its holder is gone
// (a run killed before it could remove it), or with force whoever holds it
// (perf-tools' reset-ftrace -f does the same), replaying a gone holder's
// journal into tracing_dir; and removes whatever else is planted at its
// name. Returns what was removed ("/var/tmp/.ftrace-lock (PID 123,
// gone)"), "" when nothing was (no lock, or a live holder's without force).
// Error: the unlink failed.
Result<std::string> remove_lock(const std::string& tracing_dir, bool force,
                                const std::string& lock_path = kFtraceLock);

}  // namespace tracekit::tracefs
