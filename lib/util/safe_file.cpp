// Files tracekit (root) reads or writes in places others can write to.
// (Over 450 lines on purpose: OutputWriter's target checks and the readers
// share one private path walk, walk(), which stays in this file so that no
// other code can open a path without its checks.)
#include "util/safe_file.hpp"

#include <fcntl.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <streambuf>
#include <string_view>

namespace tracekit {

namespace {

// procfs's magic number (linux/magic.h).
constexpr long kProcSuperMagic = 0x9fa0;
// As the kernel's MAXSYMLINKS.
constexpr int kMaxSymlinks = 40;

// Whether users other than the directory's owner (and root's group) can
// create, remove or rename entries in it.
bool others_can_write(const struct stat& dir) {
  return (dir.st_mode & S_IWOTH) || ((dir.st_mode & S_IWGRP) && dir.st_gid != 0);
}

// The kernel's protected_symlinks rule (fs/namei.c may_follow_link), and
// the same for a FIFO or device met at the end of a path (protected_fifos):
// something in a directory others can write to is ours to use only when we
// or the directory's owner made it.
bool made_by_us_or_dir_owner(const struct stat& st, const struct stat& dir) {
  return st.st_uid == geteuid() || st.st_uid == dir.st_uid || !others_can_write(dir);
}

bool on_procfs(int dir_fd) {
  struct statfs sf {};
  return fstatfs(dir_fd, &sf) == 0 && static_cast<long>(sf.f_type) == kProcSuperMagic;
}

Fd open_dir(int at, const char* name) {
  return Fd(::openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

void push_components(std::deque<std::string>& rest, std::string_view path) {
  std::deque<std::string> parts;
  size_t at = 0;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > at) parts.emplace_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  rest.insert(rest.begin(), parts.begin(), parts.end());
}

// The directory a path's last component is in, reached by following only
// the symlinks made_by_us_or_dir_owner allows, and that component's name.
// In /proc (/dev/stdout -> /proc/self/fd/1), the rest of the path is left
// to the kernel: its links are its own (proc_rest is then true).
struct Walked {
  Fd dir;
  std::string name;
  bool proc_rest = false;
};

Result<Walked> walk(const std::string& path) {
  if (path.empty()) return Error{ENOENT, "empty file name", path, {}};
  Walked w;
  // The path walked so far, as text, for errors ("/tmp/nodir").
  std::string walked = path[0] == '/' ? "/" : "";
  w.dir = open_dir(AT_FDCWD, path[0] == '/' ? "/" : ".");
  if (!w.dir.valid()) return Error::from_errno("cannot open", path);
  std::deque<std::string> rest;
  push_components(rest, path);
  if (rest.empty()) return Error{EISDIR, "not a file", path, {}};
  int links = 0;
  while (!rest.empty()) {
    std::string name = std::move(rest.front());
    rest.pop_front();
    const bool last = rest.empty();
    if (on_procfs(w.dir.get())) {
      w.name = name;
      for (const auto& r : rest) w.name += "/" + r;
      w.proc_rest = true;
      return w;
    }
    struct stat st {};
    const std::string here =
        walked.empty() ? name : walked + (walked.back() == '/' ? "" : "/") + name;
    if (fstatat(w.dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT && last) {
        w.name = name;
        return w;
      }
      return Error::from_errno("cannot open", here);
    }
    if (S_ISLNK(st.st_mode)) {
      struct stat dir {};
      if (fstat(w.dir.get(), &dir) != 0) return Error::from_errno("cannot open", path);
      if (!made_by_us_or_dir_owner(st, dir))
        return Error{0,
                     "refusing to follow a symlink that UID " + std::to_string(st.st_uid) +
                         " made in a directory others can write to",
                     path, "write somewhere only root can, or remove the link"};
      if (++links > kMaxSymlinks) return Error{ELOOP, "cannot open", path, {}};
      char target[4096];
      ssize_t n = readlinkat(w.dir.get(), name.c_str(), target, sizeof target);
      if (n < 0) return Error::from_errno("cannot open", path);
      if (n == 0 || static_cast<size_t>(n) == sizeof target)
        return Error{ENOENT, "cannot open", path, {}};
      std::string_view t(target, static_cast<size_t>(n));
      if (t[0] == '/') {
        w.dir = open_dir(AT_FDCWD, "/");
        if (!w.dir.valid()) return Error::from_errno("cannot open", path);
        walked = "/";
      }
      push_components(rest, t);
      if (rest.empty()) return Error{EISDIR, "not a file", path, {}};
      continue;
    }
    if (last) {
      w.name = name;
      return w;
    }
    if (!S_ISDIR(st.st_mode)) return Error{ENOTDIR, "cannot open", here, {}};
    Fd next = open_dir(w.dir.get(), name.c_str());
    if (!next.valid()) return Error::from_errno("cannot open", here);
    w.dir = std::move(next);
    walked = here;
  }
  return Error{EISDIR, "not a file", path, {}};
}

// An output stream over a file descriptor: retries writes cut short by a
// signal (a Ctrl-C while a report is being written must not lose it), and
// keeps the first error's errno.
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  int error() const { return err_; }
  uint64_t written() const { return written_; }

 protected:
  int_type overflow(int_type c) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(c, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override { return drain() ? 0 : -1; }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (n >= static_cast<std::streamsize>(sizeof buf_)) {
      if (!drain() || !write_all(s, static_cast<size_t>(n))) return 0;
      return n;
    }
    return std::streambuf::xsputn(s, n);
  }

 private:
  bool drain() {
    size_t n = static_cast<size_t>(pptr() - pbase());
    bool ok = write_all(pbase(), n);
    setp(buf_, buf_ + sizeof buf_);
    return ok;
  }
  bool write_all(const char* p, size_t n) {
    if (err_) return false;
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w < 0 && errno == EAGAIN) {
        // A FIFO or tty opened without blocking and kept so: wait for room.
        struct timespec ms{0, 1000000};
        nanosleep(&ms, nullptr);
        continue;
      }
      if (w <= 0) {
        err_ = w < 0 ? errno : EIO;
        return false;
      }
      p += w;
      n -= static_cast<size_t>(w);
      written_ += static_cast<uint64_t>(w);
    }
    return true;
  }
  int fd_;
  int err_ = 0;
  uint64_t written_ = 0;
  char buf_[64 * 1024];
};

std::string fresh_name(const std::string& base, unsigned attempt) {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  uint64_t mix = (static_cast<uint64_t>(now.tv_nsec) << 20) ^ static_cast<uint64_t>(now.tv_sec) ^
                 (static_cast<uint64_t>(getpid()) << 40) ^ (attempt * 0x9e3779b97f4a7c15ull);
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(mix));
  // Kept under NAME_MAX whatever the base's length.
  return "." + base.substr(0, 200) + ".tmp" + hex;
}

}  // namespace

const char* file_kind(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG: return "a regular file";
    case S_IFDIR: return "a directory";
    case S_IFLNK: return "a symlink";
    case S_IFIFO: return "a FIFO";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFSOCK: return "a socket";
  }
  return "an unknown kind of file";
}

namespace {

Result<Fd> open_regular_with(const std::string& path, struct stat* st, int nofollow) {
  Fd fd(::open(path.c_str(), O_RDONLY | nofollow | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ELOOP && nofollow) return Error{ELOOP, "refusing to read a symlink", path, {}};
    return Error::from_errno("cannot open", path);
  }
  struct stat s {};
  if (fstat(fd.get(), &s) != 0) return Error::from_errno("cannot open", path);
  if (!S_ISREG(s.st_mode))
    return Error{EINVAL, std::string("refusing to read ") + file_kind(s.st_mode), path, {}};
  if (st) *st = s;
  return fd;
}

}  // namespace

Result<Fd> open_regular(const std::string& path, struct stat* st) {
  return open_regular_with(path, st, O_NOFOLLOW);
}

Result<Fd> open_regular_followed(const std::string& path, struct stat* st) {
  return open_regular_with(path, st, 0);
}

Result<std::string> read_at_most(int fd, size_t max, bool* truncated) {
  std::string text;
  size_t want = max < 64 * 1024 ? max + 1 : 64 * 1024;
  for (;;) {
    size_t have = text.size();
    if (have > max) break;
    size_t chunk = std::min(want, max + 1 - have);
    text.resize(have + chunk);
    ssize_t n = ::read(fd, text.data() + have, chunk);
    if (n < 0 && errno == EINTR) {
      text.resize(have);
      continue;
    }
    if (n < 0) return Error::from_errno("cannot read");
    text.resize(have + static_cast<size_t>(n));
    if (n == 0) break;
  }
  if (truncated) *truncated = text.size() > max;
  if (text.size() > max) text.resize(max);
  return text;
}

std::string untrusted_reason(const struct stat& st, uid_t also_uid) {
  if (st.st_uid != geteuid() && st.st_uid != also_uid)
    return std::string(file_kind(st.st_mode)) + " owned by UID " + std::to_string(st.st_uid);
  if (st.st_nlink != 1) return std::to_string(st.st_nlink) + " hard links to it";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) return "writable by others";
  return "";
}

Result<Fd> create_exclusive(const std::string& path, mode_t mode) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
               mode));
  if (!fd.valid()) return Error::from_errno("cannot create", path);
  return fd;
}

Status private_dir(const std::string& path) {
  if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
    return Error::from_errno("cannot create the directory", path);
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) return Error::from_errno("cannot open", path);
  if (!S_ISDIR(st.st_mode))
    return Error{ENOTDIR, std::string("not a directory but ") + file_kind(st.st_mode), path,
                 "remove it"};
  if (st.st_uid != geteuid())
    return Error{EPERM, "a directory owned by UID " + std::to_string(st.st_uid), path,
                 "remove it"};
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return Error{EPERM, "a directory others can write to", path, "remove it"};
  return {};
}

struct OutputWriter::State {
  Fd dir;
  std::string name;   // the path's last component, in dir
  std::string fresh;  // the fresh file's name in dir, "" when in place
  Fd fd;
  std::unique_ptr<FdBuf> buf;
  std::unique_ptr<std::ostream> out;
  std::string path;
  bool committed = false;
};

OutputWriter::OutputWriter(std::unique_ptr<State> s) : s_(std::move(s)) {}
OutputWriter::OutputWriter(OutputWriter&&) noexcept = default;

OutputWriter::~OutputWriter() {
  if (s_ && !s_->committed && !s_->fresh.empty()) {
    s_->out.reset();
    s_->buf.reset();
    ::unlinkat(s_->dir.get(), s_->fresh.c_str(), 0);
  }
}

namespace {

// Where a -o path leads, and how it is written there.
struct Target {
  enum How { kFresh, kInPlace, kProc } how = kFresh;
  Fd dir;
  std::string name;
  struct stat st {};  // the in-place file's (kInPlace)
};

Result<Target> target_of(const std::string& path) {
  auto walked = walk(path);
  if (!walked) return walked.error();
  Target t;
  t.dir = std::move(walked->dir);
  t.name = std::move(walked->name);
  if (walked->proc_rest) {
    t.how = Target::kProc;
    return t;
  }
  bool exists = fstatat(t.dir.get(), t.name.c_str(), &t.st, AT_SYMLINK_NOFOLLOW) == 0;
  if (!exists && errno != ENOENT) return Error::from_errno("cannot open", path);
  if (exists && S_ISDIR(t.st.st_mode)) return Error{EISDIR, "cannot open", path, {}};
  if (!exists || S_ISREG(t.st.st_mode)) return t;
  struct stat dir {};
  if (fstat(t.dir.get(), &dir) != 0) return Error::from_errno("cannot open", path);
  if (!made_by_us_or_dir_owner(t.st, dir))
    return Error{0,
                 std::string("refusing to write into ") + file_kind(t.st.st_mode) + " that UID " +
                     std::to_string(t.st.st_uid) + " made in a directory others can write to",
                 path, "write somewhere only root can"};
  t.how = Target::kInPlace;
  return t;
}

}  // namespace

Status OutputWriter::check(const std::string& path) {
  auto t = target_of(path);
  if (!t) return t.error();
  // The directory a fresh file is made in, through our descriptor of it.
  if (t->how == Target::kFresh &&
      access(("/proc/self/fd/" + std::to_string(t->dir.get())).c_str(), W_OK) != 0)
    return Error::from_errno("cannot create a file beside", path);
  return {};
}

Result<OutputWriter> OutputWriter::open(const std::string& path) {
  auto t = target_of(path);
  if (!t) return t.error();
  auto s = std::make_unique<State>();
  s->path = path;
  s->dir = std::move(t->dir);
  s->name = std::move(t->name);
  int fd = -1;
  if (t->how == Target::kProc) {
    // /dev/stdout and the like: shared with whoever holds it, so appended to.
    fd = ::openat(s->dir.get(), s->name.c_str(),
                  O_WRONLY | O_APPEND | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return Error::from_errno("cannot open", path);
  } else if (t->how == Target::kFresh) {
    for (unsigned attempt = 0; fd < 0 && attempt < 100; ++attempt) {
      s->fresh = fresh_name(s->name, attempt);
      fd = ::openat(s->dir.get(), s->fresh.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) {
        s->fresh.clear();
        return Error::from_errno("cannot create a file beside", path);
      }
    }
    if (fd < 0) {
      s->fresh.clear();
      return Error{EEXIST, "cannot create a file beside", path, "every name tried was taken"};
    }
  } else {
    fd = ::openat(s->dir.get(), s->name.c_str(),
                  O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENXIO && S_ISFIFO(t->st.st_mode))
        return Error{ENXIO, "cannot open", path, "no process is reading the FIFO"};
      return Error::from_errno("cannot open", path);
    }
    struct stat now {};
    if (fstat(fd, &now) != 0 || now.st_dev != t->st.st_dev || now.st_ino != t->st.st_ino) {
      ::close(fd);
      return Error{EAGAIN, "cannot open", path, "it was replaced while being opened"};
    }
  }
  // Blocking from here on for a FIFO or tty (FdBuf also copes if not).
  if (int fl = fcntl(fd, F_GETFL); fl >= 0 && s->fresh.empty())
    fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  s->fd = Fd(fd);
  s->buf = std::make_unique<FdBuf>(fd);
  s->out = std::make_unique<std::ostream>(s->buf.get());
  return OutputWriter(std::move(s));
}

std::ostream& OutputWriter::stream() { return *s_->out; }

uint64_t OutputWriter::bytes_written() const { return s_->buf ? s_->buf->written() : written_; }

bool OutputWriter::in_place() const { return s_->fresh.empty(); }

Status OutputWriter::commit() {
  s_->out->flush();
  int err = s_->buf->error();
  if (!err && !*s_->out) err = EIO;
  if (err) return Error{err, "write failed", s_->path, {}};
  if (s_->fresh.empty()) {
    s_->committed = true;
    return {};
  }
  written_ = s_->buf->written();
  s_->out.reset();
  s_->buf.reset();
  if (::close(s_->fd.release()) != 0) {
    int e = errno;
    ::unlinkat(s_->dir.get(), s_->fresh.c_str(), 0);
    s_->fresh.clear();
    return Error{e, "write failed", s_->path, {}};
  }
  if (::renameat(s_->dir.get(), s_->fresh.c_str(), s_->dir.get(), s_->name.c_str()) != 0) {
    Error e = Error::from_errno("cannot rename a file over", s_->path);
    ::unlinkat(s_->dir.get(), s_->fresh.c_str(), 0);
    s_->fresh.clear();
    return e;
  }
  s_->committed = true;
  return {};
}

}  // namespace tracekit
