#include "cli/output.hpp"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

#include "cli/command.hpp"
#include "cli/signals.hpp"

namespace tracekit::cli {

namespace {

constexpr size_t kBufferBytes = 64 * 1024;
constexpr size_t kFileChunk = 1024 * 1024;

FdBuf* g_stdout = nullptr;  // the StdoutGuard's, while one lives
bool g_stdout_closed = false;  // fd 1 was closed at start (fill_closed_std_fds)

}  // namespace

size_t next_chunk(std::string_view data, size_t max) {
  if (data.size() <= max) return data.size();
  size_t nl = data.substr(0, max).rfind('\n');
  if (nl != std::string_view::npos) return nl + 1;
  nl = data.find('\n');
  return nl == std::string_view::npos ? data.size() : nl + 1;
}

WriteResult write_lines(int fd, std::string_view data, size_t chunk_max,
                        const std::function<bool()>& abort) {
  WriteResult r;
  while (r.written < data.size()) {
    if (abort && abort()) {
      r.error = EINTR;
      return r;
    }
    std::string_view rest = data.substr(r.written);
    ssize_t n = ::write(fd, rest.data(), next_chunk(rest, chunk_max));
    if (n >= 0) {
      r.written += static_cast<size_t>(n);
      continue;
    }
    if (errno == EINTR) continue;  // abort() decides
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      // A non-blocking stdout handed to us: wait as a blocking one would.
      struct pollfd p = {fd, POLLOUT, 0};
      ::poll(&p, 1, -1);
      continue;
    }
    r.error = errno;
    return r;
  }
  return r;
}

FdBuf::FdBuf(int fd, std::function<bool()> abort, bool line_buffered)
    : fd_(fd), abort_(std::move(abort)), line_buffered_(line_buffered) {
  if (fd < 0) error_ = EBADF;  // no fd (a stdout closed at start): failed from the start
  struct stat st;
  bool pipe = fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode);
  chunk_max_ = pipe ? PIPE_BUF : kFileChunk;
  pending_.reserve(kBufferBytes);
  // No put area: every put comes to xsputn() or overflow(), which see each
  // newline (a put area would hide single characters, such as std::endl's,
  // from a line-buffered stream).
  setp(nullptr, nullptr);
}

FdBuf::~FdBuf() {
  if (error_ == 0) drain(false);
}

bool FdBuf::drain(bool whole_lines) {
  if (error_ != 0) return false;
  size_t len = pending_.size();
  if (whole_lines) {
    size_t nl = pending_.rfind('\n');
    if (nl != std::string::npos) len = nl + 1;
  }
  if (!write_out(std::string_view(pending_).substr(0, len))) return false;
  pending_.erase(0, len);
  return true;
}

bool FdBuf::write_out(std::string_view data) {
  // A second Ctrl-C while a write is blocked stops the printing (abort_),
  // and what was not printed is counted, rather than ending the process.
  WritingOutput writing;
  WriteResult r = write_lines(fd_, data, chunk_max_, abort_);
  written_ += r.written;
  if (r.error != 0) {
    error_ = r.error;
    pending_.clear();
    return false;
  }
  return true;
}

bool FdBuf::put(const char* s, size_t n) {
  if (error_ != 0) return false;
  if (pending_.empty() && n >= kBufferBytes) {
    // A piece as large as the buffer (a streaming tool's batch of events)
    // goes out from where it is, up to its last newline (all of it on a
    // terminal, as below); the rest waits.
    std::string_view data(s, n);
    size_t nl = data.rfind('\n');
    size_t len = line_buffered_ || nl == std::string_view::npos ? n : nl + 1;
    if (!write_out(data.substr(0, len))) return false;
    pending_.append(data.substr(len));
    return true;
  }
  pending_.append(s, n);
  if (pending_.size() >= kBufferBytes && !drain(true)) return false;
  if (line_buffered_ && std::memchr(s, '\n', n) != nullptr && !drain(false)) return false;
  return true;
}

FdBuf::int_type FdBuf::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  char ch = traits_type::to_char_type(c);
  return put(&ch, 1) ? c : traits_type::eof();
}

std::streamsize FdBuf::xsputn(const char* s, std::streamsize n) {
  if (n <= 0) return 0;
  return put(s, static_cast<size_t>(n)) ? n : 0;
}

int FdBuf::sync() { return drain(false) ? 0 : -1; }

FdBuf::pos_type FdBuf::seekoff(off_type off, std::ios_base::seekdir dir,
                               std::ios_base::openmode which) {
  if (off != 0 || dir != std::ios_base::cur || !(which & std::ios_base::out))
    return pos_type(off_type(-1));
  return pos_type(static_cast<off_type>(written_ + pending_.size()));
}

bool fill_closed_std_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free number, which is fd: the ones below it are open.
    // Not close-on-exec, as no 0, 1 or 2 is.
    int got = ::open("/dev/null", O_RDWR);
    if (got != fd) return false;
    if (fd == STDOUT_FILENO) g_stdout_closed = true;
  }
  return true;
}

StdoutGuard::StdoutGuard(std::string tool)
    : tool_(std::move(tool)),
      // A stdout closed at start: fd -1, on which every write fails with
      // EBADF, as it would have on the closed fd 1.
      buf_(
          g_stdout_closed ? -1 : STDOUT_FILENO, [] { return stop_signal_count() >= 2; },
          isatty(STDOUT_FILENO) == 1),
      old_(std::cout.rdbuf(&buf_)) {
  g_stdout = &buf_;
}

StdoutGuard::~StdoutGuard() {
  std::cout.flush();
  std::cout.rdbuf(old_);
  std::cout.clear();
  g_stdout = nullptr;
}

namespace {
bool g_output_file_failed = false;
}  // namespace

void note_output_file_failed() { g_output_file_failed = true; }

int StdoutGuard::finish(int code) {
  std::cout.flush();
  // (The failed file was named on stderr when it failed.)
  if (g_output_file_failed && code == kExitOk) code = kExitFailure;
  int e = buf_.error();
  if (e == 0 || e == EPIPE) return code;
  std::cerr << tool_ << ": " << output_failure() << "\n";
  return code != kExitOk ? code : kExitFailure;
}

bool output_failed() { return g_stdout != nullptr && g_stdout->error() != 0; }

int output_error() { return g_stdout != nullptr ? g_stdout->error() : 0; }

uint64_t output_written() { return g_stdout != nullptr ? g_stdout->written() : 0; }

std::string output_failure() {
  int e = output_error();
  if (e == 0) return "";
  if (e == EPIPE) return "stdout was closed";
  if (e == EBADF) return "stdout is closed";
  if (e == EINTR) return "the output was stopped by a second signal";
  return std::string("error writing output: ") + std::strerror(e);
}

}  // namespace tracekit::cli
