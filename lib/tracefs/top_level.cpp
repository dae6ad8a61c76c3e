#include "tracefs/top_level.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <string_view>

#include "util/exit_writes.hpp"
#include "util/fd.hpp"
#include "util/safe_file.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

namespace {

bool alive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Creates the lock file exclusively (never through a symlink) with our PID
// in it. Returns 0, or errno (EEXIST: someone holds it, or something is
// planted there).
int create_lock(const std::string& path) {
  auto fd = create_exclusive(path, 0644);
  if (!fd) return fd.error().err;
  std::string pid = std::to_string(getpid()) + "\n";
  if (::write(fd->get(), pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
    int err = errno ? errno : EIO;
    ::unlink(path.c_str());
    return err;
  }
  return 0;
}

// The lock's directory (/var/tmp) when it is missing, as the system makes
// it: mode 01777, ours. Only in a parent (/var) that is a real directory of
// ours (root's) that no one else may write to: nobody else can have put
// anything at the name meanwhile or swap it between mkdir and chmod. A
// first-contact system's minimal root may have /var without /var/tmp;
// perf-tools' scripts, sharing the lock, then fail to write it as well.
// Returns 0 when made, else errno (the lock's own error then stands).
int make_lock_dir(const std::string& lock_path) {
  const size_t slash = lock_path.rfind('/');
  if (slash == std::string::npos || slash == 0) return ENOENT;
  const std::string dir = lock_path.substr(0, slash);
  const size_t up = dir.rfind('/');
  const std::string parent = up == std::string::npos ? "." : up == 0 ? "/" : dir.substr(0, up);
  struct stat st {};
  if (lstat(dir.c_str(), &st) == 0 || errno != ENOENT) return EEXIST;
  if (lstat(parent.c_str(), &st) != 0) return errno;
  if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return EPERM;
  if (::mkdir(dir.c_str(), 0700) != 0) return errno;
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid() || ::fchmod(fd.get(), 01777) != 0) return errno ? errno : EIO;
  std::cerr << program_invocation_short_name << ": made " << dir
            << " (mode 1777, as the system has it) for the ftrace lock\n";
  return 0;
}

// What is at the lock's path. Any user can create files in /var/tmp, so a
// lock is one only if root (we) made it: a regular file of ours. Anything
// else there (a symlink to /dev/zero, a FIFO, a user's file) is planted:
// it is never opened in a way that follows or blocks, never read beyond a
// PID's worth, and it names no holder.
struct LockFile {
  bool exists = false;
  int holder = 0;          // 0: names none
  std::string planted;     // why it is no lock, "" when it is one
  dev_t dev = 0;
  ino_t ino = 0;
};

LockFile read_lock(const std::string& path) {
  LockFile lf;
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return lf;
  lf.exists = true;
  lf.dev = st.st_dev;
  lf.ino = st.st_ino;
  if (!S_ISREG(st.st_mode)) {
    lf.planted = file_kind(st.st_mode) + (" owned by UID " + std::to_string(st.st_uid));
    return lf;
  }
  auto fd = open_regular(path, &st);
  if (!fd) {
    lf.exists = fd.error().err != ENOENT;
    lf.planted = lf.exists ? fd.error().message : "";
    return lf;
  }
  if (st.st_uid != geteuid()) {
    lf.planted = file_kind(st.st_mode) + (" owned by UID " + std::to_string(st.st_uid));
    return lf;
  }
  lf.dev = st.st_dev;
  lf.ino = st.st_ino;
  // A PID and a newline; a longer text is no lock of perf-tools' or ours.
  auto text = read_at_most(fd->get(), 32);
  if (text) lf.holder = lock_holder(*text);
  return lf;
}

// Removes what read_lock() found, if it is still that file.
void remove_if_same(const std::string& path, const LockFile& lf) {
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0 && st.st_dev == lf.dev && st.st_ino == lf.ino)
    ::unlink(path.c_str());
}

}  // namespace

std::string journal_dir(const std::string& lock_path) {
  return lock_path == kFtraceLock ? std::string(kJournalDir) : lock_path + ".journals";
}

std::string top_level_journal(const std::string& lock_path, int pid) {
  return journal_dir(lock_path) + "/top-level." + std::to_string(pid);
}

int lock_holder(std::string_view text) {
  auto pid = parse_int<int>(trim(text));
  return pid && *pid > 0 ? *pid : 0;
}

Result<std::string> remove_lock(const std::string& tracing_dir, bool force,
                                const std::string& lock_path) {
  LockFile lf = read_lock(lock_path);
  if (!lf.exists) return std::string();
  if (!lf.planted.empty()) {
    if (::unlink(lock_path.c_str()) != 0 && errno != ENOENT)
      return Error::from_errno("cannot remove the ftrace lock", lock_path);
    return lock_path + " (no lock: " + lf.planted + ")";
  }
  bool live = alive(lf.holder);
  if (live && !force) return std::string();
  if (::unlink(lock_path.c_str()) != 0 && errno != ENOENT)
    return Error::from_errno("cannot remove the ftrace lock", lock_path);
  // What a killed tracekit holder changed at the top level (a live one
  // undoes its own).
  if (!live && lf.holder) {
    replay_journal(top_level_journal(lock_path, lf.holder), tracing_dir);
    // Its directory too, when no other journal is left there (a run
    // starting meanwhile makes it again: Instance::top_level).
    ::rmdir(journal_dir(lock_path).c_str());
  }
  return lock_path + " (" + (lf.holder ? "PID " + std::to_string(lf.holder) : std::string("no PID")) +
         (live ? ", alive" : ", gone") + ")";
}

TopLevel::TopLevel(const std::string& tracing_dir, std::string lock_path)
    : log_(tracing_dir, {tracing_dir}), lock_path_(std::move(lock_path)) {}

Result<TopLevel> TopLevel::acquire(const std::string& tracing_dir, const std::string& lock_path) {
  // Twice at most: once more after removing a lock its holder left behind
  // (or something planted at its name).
  int stale = 0;  // the holder of a stale lock removed
  for (int attempt = 0; attempt < 2; ++attempt) {
    int err = create_lock(lock_path);
    if (err == ENOENT && make_lock_dir(lock_path) == 0) err = create_lock(lock_path);
    if (err == 0) {
      // A tracekit holder killed before it could undo its changes left
      // them in its journal: undone now that the lock is ours.
      if (stale) replay_journal(top_level_journal(lock_path, stale), tracing_dir);
      return TopLevel(tracing_dir, lock_path);
    }
    if (err == ENOENT)
      return Error{err, "cannot write the ftrace lock", lock_path,
                   "its directory is missing and was not made: its parent must be root's "
                   "directory, writable by root alone; make it with mode 1777"};
    if (err != EEXIST)
      return Error{err, "cannot write the ftrace lock", lock_path,
                   err == EACCES || err == EPERM ? "run as root" : ""};
    LockFile lf = read_lock(lock_path);
    if (!lf.exists) continue;  // removed meanwhile: try again
    if (!lf.planted.empty()) {
      std::cerr << program_invocation_short_name << ": removed " << lock_path
                << ": no ftrace lock but " << lf.planted << "\n";
      remove_if_same(lock_path, lf);
      continue;
    }
    if (alive(lf.holder))
      return Error{EBUSY, "ftrace is in use by PID " + std::to_string(lf.holder), lock_path,
                   "wait for it to end (its top-level ftrace settings would clash with ours)"};
    // Its holder is gone (or it names none): stale. Remove it (if it is
    // still the same file), then race for it like anyone else.
    remove_if_same(lock_path, lf);
    stale = lf.holder;
  }
  return Error{EBUSY, "ftrace lock keeps being taken", lock_path, "another tracer is starting"};
}

TopLevel::TopLevel(TopLevel&& o) noexcept
    : log_(std::move(o.log_)),
      lock_path_(std::move(o.lock_path_)),
      exit_slots_(std::move(o.exit_slots_)) {
  o.lock_path_.clear();
  o.exit_slots_.clear();
}

TopLevel::~TopLevel() {
  if (lock_path_.empty()) return;
  log_.undo();
  for (int slot : exit_slots_) remove_exit_write(slot);
  // Only our own lock: a reset-tracing -f may have removed it and someone
  // else taken it since.
  if (LockFile lf = read_lock(lock_path_); lf.planted.empty() && lf.holder == getpid())
    remove_if_same(lock_path_, lf);
}

Status TopLevel::set(const std::string& rel, const std::string& value) {
  std::string before;
  if (auto s = log_.set(rel, value, &before); !s) return s;
  exit_slots_.push_back(add_exit_write(log_.dir() + "/" + rel, before));
  return {};
}

Status TopLevel::set_option(const std::string& option, bool on) {
  const std::string rel = "options/" + option;
  if (!log_.has(rel))
    return Error{ENOENT, "no such trace option " + option, log_.dir() + "/" + rel,
                 "see trace_options"};
  return set(rel, on ? "1" : "0");
}

}  // namespace tracekit::tracefs
