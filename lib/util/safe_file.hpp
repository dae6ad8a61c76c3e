// Files in places other users can write to: /var/tmp (perf-tools' lock),
// /tmp (a JIT's perf-PID.map, a -o path), any directory a user owns.
//
// tracekit runs as root on shared hosts, so anything an unprivileged user
// can plant there (a symlink to /etc/shadow or to a block device, a FIFO
// that never answers, /dev/zero, a hard link to a root file) must neither
// be written through, nor read without bound, nor block a run. These are
// the one way tracekit opens such files:
//   - open_regular: O_NOFOLLOW | O_NONBLOCK, and only a regular file;
//   - read_at_most: a bounded read;
//   - check_trusted: owned by us (or an allowed owner), one link, writable
//     by no one else: a file only its owner could have made as it is;
//   - create_exclusive: O_CREAT | O_EXCL | O_NOFOLLOW, never an existing file;
//   - private_dir: a directory only we can write to (the undo journals);
//   - OutputWriter: a -o FILE, resolved with the kernel's protected_symlinks
//     rule applied by hand (whatever the host's sysctl), written to a fresh
//     file beside it and renamed over it.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>

#include "util/fd.hpp"
#include "util/result.hpp"

namespace tracekit {

// Opens path for reading without following a symlink in its last component
// and without blocking (a FIFO with no writer, a device), and keeps it only
// if it is a regular file; *st (when given) gets its fstat. Error: ELOOP for
// a symlink, EINVAL for anything else that is not a regular file (the
// message names what it is), or the open's errno.
Result<Fd> open_regular(const std::string& path, struct stat* st = nullptr);
// The same, but following symlinks: for a path root named itself (a uprobe
// target, a library found on the library path), where only the file it
// leads to must be regular.
Result<Fd> open_regular_followed(const std::string& path, struct stat* st = nullptr);

// Reads fd from its current offset, at most max bytes (more is left unread;
// *truncated says whether there was more).
Result<std::string> read_at_most(int fd, size_t max, bool* truncated = nullptr);

// Why a file someone else could have planted is not trusted, or "" when it
// is: it must be owned by the effective user or by also_uid (pass the
// effective user again for none), have one link (a hard link to someone
// else's file is not a file of theirs), and be writable by its owner only.
// Pure.
std::string untrusted_reason(const struct stat& st, uid_t also_uid);

// What kind of file st is, in words ("a symlink", "a FIFO", "a block
// device", ...). Pure.
const char* file_kind(mode_t mode);

// Creates path, which must not exist (not even as a symlink), for writing.
Result<Fd> create_exclusive(const std::string& path, mode_t mode);

// A directory only the effective user can write to, at path: created (mode
// 0700) when missing. Error: it is a symlink or not a directory, or is owned
// by someone else, or others can write to it.
Status private_dir(const std::string& path);

// Writes a -o FILE as root may on a shared host.
//
// The path is walked component by component from a directory fd, and a
// symlink on the way is followed only where the kernel's protected_symlinks
// would follow it: when we own it, when the directory's owner does, or when
// no one else can write to that directory. Then:
//   - a new name or a regular file: the output goes to a fresh file created
//     exclusively beside it, renamed over it at commit() (a reader never
//     sees half a file; a symlink or file planted at the fresh name is
//     never opened);
//   - a FIFO or a device (/dev/null, /dev/stdout, a tty): written in place,
//     opened without blocking, but only when we own it or no one else can
//     write to its directory (a FIFO planted in /tmp is refused);
//   - anything under /proc (/dev/stdout -> /proc/self/fd/1): written in
//     place, as the kernel resolves it.
// Nothing planted in a shared directory is ever opened with O_TRUNC.
class OutputWriter {
 public:
  static Result<OutputWriter> open(const std::string& path);
  // What open() would refuse, checked without creating or opening anything
  // (before a run starts, so that a typo does not cost the run).
  static Status check(const std::string& path);
  OutputWriter(OutputWriter&&) noexcept;
  OutputWriter& operator=(OutputWriter&&) = delete;
  ~OutputWriter();  // removes the fresh file when not committed

  // The stream to write the output to.
  std::ostream& stream();
  // Written in place (a device, a FIFO, /dev/stdout) rather than renamed.
  bool in_place() const;
  // Flushes, and renames the fresh file over the path. Error: a write or
  // the rename failed (the fresh file is removed).
  Status commit();
  // Bytes written so far (what reached the file).
  uint64_t bytes_written() const;

 private:
  struct State;
  explicit OutputWriter(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
  uint64_t written_ = 0;
};

}  // namespace tracekit
