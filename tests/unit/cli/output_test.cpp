// The tools' stdout (lib/cli/output): write errors are kept and reported,
// interrupted writes are retried until told to abort, and an abort never
// leaves part of a line in a pipe. Signal state is process-wide, so tests
// that send signals run in a forked child (see in_child).
#include "cli/output.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <ostream>
#include <string>
#include <thread>

#include "cli/command.hpp"
#include "../in_child.hpp"

namespace tracekit::cli {
namespace {

using tracekit::testing::in_child;

// n numbered lines of varying length.
std::string lines(int n) {
  std::string s;
  for (int i = 0; i < n; ++i)
    s += "line " + std::to_string(i) + " " + std::string(static_cast<size_t>(i % 97), 'x') + "\n";
  return s;
}

std::string read_all(int fd) {
  std::string s;
  char buf[8192];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0) s.append(buf, static_cast<size_t>(n));
  return s;
}

// The content of a file descriptor open on a regular file, from the start.
std::string file_content(int fd) {
  std::string s;
  char buf[8192];
  ssize_t n;
  off_t off = 0;
  while ((n = pread(fd, buf, sizeof buf, off)) > 0) {
    s.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return s;
}

TEST(CliOutputTest, NextChunkEndsAtANewline) {
  struct Case {
    const char* data;
    size_t max;
    size_t len;
  };
  const Case cases[] = {
      {"", 10, 0},
      {"abc\n", 10, 4},
      {"ab\ncd", 5, 5},                // fits whole, newline or not
      {"ab\ncdef", 5, 3},              // up to the last newline within max
      {"aaaa\nbbbb\ncccc\n", 12, 10},  // ... the last of several
      {"aaaa\nbbbb\ncccc\n", 15, 15},
      {"aaaaaaaaaaaa\nb\n", 5, 13},  // one line longer than max: that line
      {"aaaaaaaaaa", 5, 10},         // no newline at all: everything
  };
  for (const auto& c : cases) EXPECT_EQ(next_chunk(c.data, c.max), c.len) << c.data << " " << c.max;
}

// A pipe of one page, whose writer blocks as soon as a page is pending.
struct SmallPipe {
  int r = -1, w = -1;
  SmallPipe() {
    int fds[2];
    if (pipe(fds) != 0) return;
    r = fds[0];
    w = fds[1];
    fcntl(w, F_SETPIPE_SZ, 4096);
  }
  ~SmallPipe() {
    if (r >= 0) close(r);
    if (w >= 0) close(w);
  }
};

std::atomic<int> g_usr1{0};
void on_usr1(int) { g_usr1.fetch_add(1); }

// SIGUSR1 interrupts blocking calls (no SA_RESTART), as the tools' stop
// signals do.
void install_usr1() {
  struct sigaction sa = {};
  sa.sa_handler = on_usr1;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGUSR1, &sa, nullptr);
}

// Whether thread tid is blocked in write(2) (/proc/self/task/TID/syscall).
bool blocked_in_write(pid_t tid) {
  FILE* f = std::fopen(("/proc/self/task/" + std::to_string(tid) + "/syscall").c_str(), "r");
  if (f == nullptr) return false;
  long nr = -1;
  int got = std::fscanf(f, "%ld", &nr);
  std::fclose(f);
  return got == 1 && nr == SYS_write;
}

// Runs write_lines(data) on a thread that is interrupted by `signals`
// SIGUSR1s while blocked on a full pipe, each sent once it blocks again;
// then reads the pipe to its end. Returns what arrived; result gets
// write_lines' answer.
std::string interrupted_write(const std::string& data, int signals,
                              const std::function<bool()>& abort, WriteResult& result) {
  install_usr1();
  SmallPipe p;
  std::atomic<pid_t> tid{0};
  std::thread writer([&] {
    tid = static_cast<pid_t>(syscall(SYS_gettid));
    result = write_lines(p.w, data, PIPE_BUF, abort);
    close(p.w);
    p.w = -1;
  });
  pthread_t handle = writer.native_handle();
  for (int i = 0; i < signals; ++i) {
    // Blocked again after the previous signal: its handler has run.
    while (tid == 0 || !blocked_in_write(tid) || g_usr1 < i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    pthread_kill(handle, SIGUSR1);
  }
  while (g_usr1 < signals) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::string got = read_all(p.r);
  writer.join();
  return got;
}

TEST(CliOutputTest, InterruptedWritesAreRetried) {
  EXPECT_EQ(in_child([] {
              std::string data = lines(3000);
              WriteResult r;
              std::string got = interrupted_write(
                  data, 3, [] { return false; }, r);
              if (r.error != 0) return 1;
              if (r.written != data.size()) return 2;
              if (got != data) return 3;  // nothing lost, nothing doubled
              return 0;
            }),
            0);
}

TEST(CliOutputTest, AbortLeavesWholeLinesInThePipe) {
  EXPECT_EQ(in_child([] {
              std::string data = lines(3000);
              WriteResult r;
              std::string got = interrupted_write(
                  data, 1, [] { return g_usr1 > 0; }, r);
              if (r.error != EINTR) return 1;
              if (r.written == 0 || r.written >= data.size()) return 2;
              if (got != data.substr(0, r.written)) return 3;
              if (got.back() != '\n') return 4;  // no line cut
              return 0;
            }),
            0);
}

TEST(CliOutputTest, FullDiskIsKeptAndLaterWritesFail) {
  int fd = open("/dev/full", O_WRONLY);
  ASSERT_GE(fd, 0);
  {
    FdBuf buf(fd, {});
    std::ostream out(&buf);
    out << "Tracing... Hit Ctrl-C to end." << std::endl;
    EXPECT_TRUE(out.bad());
    EXPECT_EQ(buf.error(), ENOSPC);
    EXPECT_EQ(buf.written(), 0u);
    out.clear();
    out << "more\n";
    out.flush();
    EXPECT_TRUE(out.bad());  // at once: nothing more is tried
    EXPECT_EQ(buf.error(), ENOSPC);
  }
  close(fd);
}

TEST(CliOutputTest, ClosedPipeIsEpipe) {
  EXPECT_EQ(in_child([] {
              signal(SIGPIPE, SIG_IGN);
              int fds[2];
              if (pipe(fds) != 0) return 1;
              close(fds[0]);
              FdBuf buf(fds[1], {});
              std::ostream out(&buf);
              out << "stack\n" << std::flush;
              if (!out.bad()) return 2;
              if (buf.error() != EPIPE) return 3;
              return 0;
            }),
            0);
}

TEST(CliOutputTest, EverythingArrivesAndTellpCountsIt) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  std::string got;
  std::thread reader([&] { got = read_all(fds[0]); });
  std::string expected;
  {
    FdBuf buf(fds[1], {});
    std::ostream out(&buf);
    for (int i = 0; i < 20000; ++i) {
      out << "    " << i << ' ' << 0.5 << "\n";
      expected += "    " + std::to_string(i) + " 0.5\n";
    }
    EXPECT_EQ(static_cast<uint64_t>(std::streamoff(out.tellp())), expected.size());
    EXPECT_LT(buf.written(), expected.size());  // the last part is still buffered
    out.flush();
    EXPECT_TRUE(out.good());
    EXPECT_EQ(buf.written(), expected.size());
    EXPECT_EQ(buf.error(), 0);
  }
  close(fds[1]);
  reader.join();
  close(fds[0]);
  EXPECT_EQ(got, expected);
}

TEST(CliOutputTest, AFullBufferGoesOutUpToItsLastNewline) {
  int fd = memfd_create("out", 0);
  ASSERT_GE(fd, 0);
  {
    FdBuf buf(fd, {});
    std::ostream out(&buf);
    for (int i = 0; i < 20000; ++i) out << "123456789\n";  // 200 kB, never flushed
    out << "12345";
    std::string so_far = file_content(fd);
    EXPECT_GT(so_far.size(), 0u);
    EXPECT_EQ(so_far.size() % 10, 0u);
    EXPECT_EQ(so_far.back(), '\n');
  }  // the destructor flushes
  EXPECT_EQ(file_content(fd).size(), 200005u);
  close(fd);
}

// A piece of a buffer's size or more, put at once (a streaming tool's batch),
// goes out as a full buffer would: up to its last newline, the rest kept;
// and on a terminal all of it.
TEST(CliOutputTest, ALargePieceGoesOutUpToItsLastNewline) {
  std::string piece;
  for (int i = 0; i < 10000; ++i) piece += "123456789\n";  // 100 kB
  piece += "12345";
  int fd = memfd_create("out", 0);
  ASSERT_GE(fd, 0);
  {
    FdBuf buf(fd, {});
    std::ostream out(&buf);
    out << "first\n";  // buffered: the piece joins it
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    EXPECT_EQ(file_content(fd), "first\n" + piece.substr(0, piece.size() - 5));
    out.flush();
    out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
    // Written from where it is, after what was kept.
    EXPECT_EQ(file_content(fd), "first\n" + piece + piece.substr(0, piece.size() - 5));
    EXPECT_EQ(out.tellp(), static_cast<std::streamoff>(6 + 2 * piece.size()));
  }
  EXPECT_EQ(file_content(fd), "first\n" + piece + piece);
  close(fd);
  int tty = memfd_create("tty", 0);
  ASSERT_GE(tty, 0);
  FdBuf line(tty, {}, /*line_buffered=*/true);
  std::ostream out(&line);
  out.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  EXPECT_EQ(file_content(tty), piece);
  close(tty);
}

TEST(CliOutputTest, LineBufferedWritesEachLine) {
  int fd = memfd_create("out", 0);
  ASSERT_GE(fd, 0);
  FdBuf buf(fd, {}, /*line_buffered=*/true);
  std::ostream out(&buf);
  out << "Tracing... Hit Ctrl-C to end.\n";
  EXPECT_EQ(file_content(fd), "Tracing... Hit Ctrl-C to end.\n");
  out << "  frame";
  EXPECT_EQ(file_content(fd), "Tracing... Hit Ctrl-C to end.\n");
  out << '\n';
  EXPECT_EQ(file_content(fd), "Tracing... Hit Ctrl-C to end.\n  frame\n");
  close(fd);
}

// StdoutGuard in a child whose fd 1 is `out_fd` and fd 2 a pipe: the exit
// code finish() returns and what it said on stderr.
struct Finished {
  int code = -1;
  std::string err;
};
Finished finish_with_stdout(int out_fd, int code) {
  int errp[2];
  if (pipe(errp) != 0) return {};
  std::fflush(nullptr);
  std::cout.flush();
  pid_t pid = fork();
  if (pid == 0) {
    signal(SIGPIPE, SIG_IGN);
    dup2(out_fd, STDOUT_FILENO);
    dup2(errp[1], STDERR_FILENO);
    int rc;
    {
      StdoutGuard guard("stackcount");
      std::cout << "Tracing 1 functions for \"x\"... Hit Ctrl-C to end.\n";
      rc = guard.finish(code);
      if (output_failed() != (output_error() != 0)) rc = 100;
    }
    std::cerr.flush();
    _exit(rc);
  }
  close(errp[1]);
  Finished f;
  f.err = read_all(errp[0]);
  close(errp[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  f.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return f;
}

TEST(CliOutputTest, FinishReportsWriteErrors) {
  int full = open("/dev/full", O_WRONLY);
  ASSERT_GE(full, 0);
  Finished f = finish_with_stdout(full, kExitOk);
  EXPECT_EQ(f.code, 1);
  EXPECT_EQ(f.err, "stackcount: error writing output: No space left on device\n");
  f = finish_with_stdout(full, 2);  // a usage error keeps its code
  EXPECT_EQ(f.code, 2);
  EXPECT_EQ(f.err, "stackcount: error writing output: No space left on device\n");
  close(full);

  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  close(fds[0]);  // the reader has gone: "| head", no error
  f = finish_with_stdout(fds[1], kExitOk);
  EXPECT_EQ(f.code, 0);
  EXPECT_EQ(f.err, "");
  close(fds[1]);

  int devnull = open("/dev/null", O_WRONLY);
  f = finish_with_stdout(devnull, kExitOk);
  EXPECT_EQ(f.code, 0);
  EXPECT_EQ(f.err, "");
  close(devnull);
}

}  // namespace
}  // namespace tracekit::cli
