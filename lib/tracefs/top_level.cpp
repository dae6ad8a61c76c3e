#include "tracefs/top_level.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <string_view>

#include "util/exit_writes.hpp"
#include "util/fd.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

namespace {

bool alive(int pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

// Creates the lock file exclusively with our PID in it. Returns 0, or errno
// (EEXIST: someone holds it).
int create_lock(const std::string& path) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  if (!fd.valid()) return errno;
  std::string pid = std::to_string(getpid()) + "\n";
  if (::write(fd.get(), pid.data(), pid.size()) != static_cast<ssize_t>(pid.size())) {
    int err = errno ? errno : EIO;
    ::unlink(path.c_str());
    return err;
  }
  return 0;
}

}  // namespace

std::string top_level_journal(const std::string& lock_path, int pid) {
  return lock_path + ".tracekit-" + std::to_string(pid);
}

int lock_holder(std::string_view text) {
  auto pid = parse_int<int>(trim(text));
  return pid && *pid > 0 ? *pid : 0;
}

Result<std::string> remove_lock(bool force, const std::string& lock_path) {
  auto text = read_file(lock_path);
  if (!text) return std::string();
  int holder = lock_holder(*text);
  bool live = alive(holder);
  if (live && !force) return std::string();
  if (::unlink(lock_path.c_str()) != 0 && errno != ENOENT)
    return Error::from_errno("cannot remove the ftrace lock", lock_path);
  // What a killed tracekit holder changed at the top level (a live one
  // undoes its own).
  if (!live && holder) replay_journal(top_level_journal(lock_path, holder));
  return lock_path + " (" + (holder ? "PID " + std::to_string(holder) : std::string("no PID")) +
         (live ? ", alive" : ", gone") + ")";
}

TopLevel::TopLevel(const std::string& tracing_dir, std::string lock_path)
    : log_(tracing_dir, {tracing_dir}), lock_path_(std::move(lock_path)) {}

Result<TopLevel> TopLevel::acquire(const std::string& tracing_dir, const std::string& lock_path) {
  // Twice at most: once more after removing a lock its holder left behind.
  int stale = 0;  // the holder of a stale lock removed
  for (int attempt = 0; attempt < 2; ++attempt) {
    int err = create_lock(lock_path);
    if (err == 0) {
      // A tracekit holder killed before it could undo its changes left
      // them in its journal: undone now that the lock is ours.
      if (stale) replay_journal(top_level_journal(lock_path, stale));
      return TopLevel(tracing_dir, lock_path);
    }
    if (err != EEXIST)
      return Error{err, "cannot write the ftrace lock", lock_path, "run as root"};
    auto text = read_file(lock_path);
    if (!text) continue;  // removed meanwhile: try again
    int holder = lock_holder(*text);
    if (alive(holder))
      return Error{EBUSY, "ftrace is in use by PID " + std::to_string(holder), lock_path,
                   "wait for it to end (its top-level ftrace settings would clash with ours)"};
    // Its holder is gone (or it names none): stale. Remove it only if it is
    // still the same file text, then race for it like anyone else.
    if (auto again = read_file(lock_path); again && *again == *text) {
      ::unlink(lock_path.c_str());
      stale = holder;
    }
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
  if (auto text = read_file(lock_path_); text && lock_holder(*text) == getpid())
    ::unlink(lock_path_.c_str());
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
