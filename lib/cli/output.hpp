// The tools' stdout: std::cout writes through an FdBuf on fd 1, so that a
// failed write is never silent and a signal never cuts a line.
//
// iostreams over stdio lose output in two ways: a write that fails (a full
// disk, /dev/full) only sets a stream state nobody reads, so the tool exits
// 0; and a write(2) blocked on a full pipe returns EINTR when a stop signal
// arrives (the handlers have no SA_RESTART), which stdio treats as an error,
// dropping the rest of the buffer, often mid-line. FdBuf writes with
// write(2) itself: it retries EINTR until told to abort (the second stop
// signal: see StdoutGuard), and records the errno of the first failure, after
// which it writes nothing more. On a pipe each write(2) carries at most
// PIPE_BUF bytes ending at a newline, which the kernel writes whole or not at
// all: whatever stops the output, the reader never gets part of a line.
#pragma once

#include <cstdint>
#include <functional>
#include <streambuf>
#include <string>
#include <string_view>

namespace tracekit::cli {

// The length of the next write(2) for data: the whole of data when it fits
// in max bytes; else up to and including the last newline within the first
// max bytes; else (one line longer than max) up to and including the first
// newline, or all of data when it has none. Never 0 for non-empty data. Pure.
size_t next_chunk(std::string_view data, size_t max);

struct WriteResult {
  size_t written = 0;  // bytes that reached fd
  int error = 0;       // errno of the failure; 0 when all was written
};

// Writes all of data to fd, in next_chunk(.., chunk_max) pieces, across
// partial writes. EINTR is retried unless abort() returns true (checked
// before every write(2) and after every EINTR), which ends the write with
// error EINTR. Other errors end it at once.
WriteResult write_lines(int fd, std::string_view data, size_t chunk_max,
                        const std::function<bool()>& abort);

// A streambuf writing to fd through write_lines(). Buffered (64 KiB): the
// buffer goes out on flush (sync), when full (up to its last newline), and,
// when line_buffered (a terminal), whenever a newline is put. After the first failed write every
// later one fails at once (the stream goes bad) and nothing more reaches fd. tellp() on a stream
// over it gives the bytes put so far (written or buffered), to compare with written(). The fd is
// not owned.
class FdBuf : public std::streambuf {
 public:
  // abort: see write_lines (empty: never abort). Chunks are PIPE_BUF bytes
  // at most on a pipe (fstat at construction), else 1 MiB. fd -1: failed
  // from the start, with EBADF (nothing is ever written).
  FdBuf(int fd, std::function<bool()> abort, bool line_buffered = false);
  ~FdBuf() override;  // flushes
  FdBuf(const FdBuf&) = delete;
  FdBuf& operator=(const FdBuf&) = delete;

  int error() const { return error_; }           // errno of the first failed write, 0
  uint64_t written() const { return written_; }  // bytes that reached fd

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* s, std::streamsize n) override;
  int sync() override;
  pos_type seekoff(off_type off, std::ios_base::seekdir dir,
                   std::ios_base::openmode which) override;

 private:
  // Writes the buffer out: all of it, or (whole_lines) only up to its last
  // newline when it has one. False once a write has failed.
  bool drain(bool whole_lines);
  // Writes data to fd (see write_lines), recording a failure. False once a
  // write has failed.
  bool write_out(std::string_view data);
  // Appends to the buffer, draining it as the class comment says.
  bool put(const char* s, size_t n);

  int fd_;
  std::function<bool()> abort_;
  bool line_buffered_;
  size_t chunk_max_;
  std::string pending_;  // put, not yet written
  uint64_t written_ = 0;
  int error_ = 0;
};

// Puts /dev/null on whichever of fds 0, 1 and 2 is closed ("profile 3 >&-"),
// first thing in main: else the first file the tool opens (a perf event, a
// tracefs file) gets that number, and the report is written into it, or
// what the tool reads comes from it. Remembers a closed stdout: the
// StdoutGuard made after it writes to no fd: it has failed from the start
// with EBADF ("stdout is closed", the shell's own complaint), and tools/
// tracekit.cpp says so and exits 1 before the tool runs, rather than letting
// the report vanish into /dev/null. Returns false when /dev/null cannot be opened
// (the caller exits 1).
bool fill_closed_std_fds();

// An output file (-o) could not be written: the tool says which on stderr
// when it happens, and StdoutGuard::finish() then turns a successful exit
// into 1, so that scripts notice.
void note_output_file_failed();

// What a tool's stdout became: FdBuf on fd 1 under std::cout while it lives,
// aborting a blocked write at the second stop signal (the first ends the
// tracing; its output is still printed in full to a slow reader). tools/
// tracekit.cpp puts one around every tool's main.
class StdoutGuard {
 public:
  explicit StdoutGuard(std::string tool);
  ~StdoutGuard();  // flushes and puts std::cout's own streambuf back
  StdoutGuard(const StdoutGuard&) = delete;
  StdoutGuard& operator=(const StdoutGuard&) = delete;

  // The end of a run: flushes std::cout; when a write failed for another
  // reason than a closed pipe (EPIPE: the reader is done, e.g. "| head"),
  // prints "<tool>: <output_failure()>" on stderr and returns 1 (or code,
  // if that is already non-zero); else returns code.
  int finish(int code);

 private:
  std::string tool_;
  FdBuf buf_;
  std::streambuf* old_;
};

// While a StdoutGuard lives: true once a write to stdout has failed (closed
// pipe, full disk, output stopped by a second signal); streaming tools stop
// then. False without a guard.
bool output_failed();
// The errno of std::cout's first failed write (EINTR: stopped by a second
// signal), 0 when none failed or without a guard.
int output_error();
// Bytes of std::cout that reached fd 1 (0 without a guard).
uint64_t output_written();
// Why the output failed, as a phrase: "stdout was closed" (EPIPE), "stdout
// is closed" (EBADF: closed when the tool started), "the output was stopped
// by a second signal" (EINTR), else "error writing output: <strerror>". ""
// when it has not failed.
std::string output_failure();

}  // namespace tracekit::cli
