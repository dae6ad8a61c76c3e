#include "cli/signals.hpp"

#include "util/exit_writes.hpp"
#include "../in_child.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
#include <thread>

namespace tracekit::cli {
namespace {

using tracekit::testing::in_child;

TEST(CliSignalsTest, EachStopSignalSetsTheFlag) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
    EXPECT_EQ(in_child([sig] {
                if (stop_requested() || stop_signal() != 0) return 1;
                install_stop_handlers();
                if (stop_requested()) return 2;
                raise(sig);  // would kill the child without our handler
                if (!stop_requested()) return 3;
                if (stop_signal() != sig) return 4;
                return 0;
              }),
              0)
        << strsignal(sig);
  }
}

TEST(CliSignalsTest, FirstSignalIsKept) {
  EXPECT_EQ(in_child([] {
              install_stop_handlers();
              install_stop_handlers();  // idempotent
              raise(SIGPIPE);
              raise(SIGTERM);  // the first stop from a user: SIGPIPE is none
              raise(SIGPIPE);
              if (!stop_requested()) return 1;
              if (stop_signal() != SIGPIPE) return 2;
              return 0;
            }),
            0);
}

// A second SIGINT/SIGTERM/SIGHUP/SIGQUIT ends the process at once with
// 128 + signal, after the registered exit writes (an instance's tracing_on).
TEST(CliSignalsTest, SecondStopSignalExitsAtOnce) {
  for (int second : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    char path[] = "/tmp/tracekit_exit_write_XXXXXX";
    int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "1\n", 2), 2);
    close(fd);
    std::string p = path;
    EXPECT_EQ(in_child([&] {
                install_stop_handlers();
                if (add_exit_write(p, "0") < 0) return 1;
                raise(SIGTERM);
                if (!stop_requested()) return 2;
                raise(second);  // does not return
                return 3;
              }),
              128 + second)
        << strsignal(second);
    char buf[8] = {};
    fd = open(path, O_RDONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(read(fd, buf, sizeof buf), 1);
    EXPECT_EQ(buf[0], '0') << "the exit write was not made";
    close(fd);
    unlink(path);
  }
}

// While output is being written, a second stop is counted, not an exit: the
// writer stops printing and reports what it did not print.
TEST(CliSignalsTest, SecondStopWhileWritingOutputIsCounted) {
  EXPECT_EQ(in_child([] {
              install_stop_handlers();
              {
                WritingOutput writing;
                raise(SIGINT);
                raise(SIGINT);
                if (stop_signal_count() != 2) return 1;
              }
              raise(SIGTERM);  // not writing any more: exits at once
              return 2;
            }),
            128 + SIGTERM);
}

// Stop signals blocked by the parent (the mask survives exec) are unblocked.
TEST(CliSignalsTest, InstallUnblocksStopSignals) {
  EXPECT_EQ(in_child([] {
              sigset_t set;
              sigemptyset(&set);
              sigaddset(&set, SIGINT);
              sigaddset(&set, SIGTERM);
              sigprocmask(SIG_BLOCK, &set, nullptr);
              install_stop_handlers();
              sigset_t now;
              sigprocmask(SIG_BLOCK, nullptr, &now);
              if (sigismember(&now, SIGINT) || sigismember(&now, SIGTERM)) return 1;
              raise(SIGINT);
              if (!stop_requested()) return 2;
              return 0;
            }),
            0);
}

TEST(ExitWritesTest, SlotsAreReusedAndRemovedWritesAreNotMade) {
  std::vector<int> slots;
  for (int i = 0; i < 16; ++i) slots.push_back(add_exit_write("/nonexistent/x", "0"));
  for (int s : slots) EXPECT_GE(s, 0);
  EXPECT_EQ(add_exit_write("/nonexistent/y", "0"), -1) << "the registry is full";
  EXPECT_EQ(add_exit_write(std::string(600, 'a'), "0"), -1) << "too long";
  for (int s : slots) remove_exit_write(s);
  EXPECT_EQ(run_exit_writes(), 0);
  int s = add_exit_write("/nonexistent/z", "0");
  EXPECT_GE(s, 0);
  remove_exit_write(s);
  remove_exit_write(-1);  // ignored
}

TEST(CliSignalsTest, RequestStop) {
  EXPECT_EQ(in_child([] {
              request_stop();
              if (!stop_requested()) return 1;
              if (stop_signal() != 0) return 2;  // no signal arrived
              request_stop(SIGPIPE);
              if (stop_signal() != SIGPIPE) return 3;
              install_stop_handlers();
              raise(SIGPIPE);
              if (stop_signal() != SIGPIPE) return 4;
              return 0;
            }),
            0);
}

// No SA_RESTART: a read blocked on an empty pipe returns EINTR when a stop
// signal arrives, so a tool's loop sees the flag at once.
TEST(CliSignalsTest, BlockingCallsAreInterrupted) {
  EXPECT_EQ(in_child([] {
              install_stop_handlers();
              int fds[2];
              if (pipe(fds) != 0) return 1;
              pthread_t main_thread = pthread_self();
              std::thread killer([main_thread] {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
                pthread_kill(main_thread, SIGHUP);
              });
              char c;
              ssize_t n = read(fds[0], &c, 1);  // nothing will ever be written
              int saved = errno;
              killer.join();
              if (n != -1 || saved != EINTR) return 2;
              if (stop_signal() != SIGHUP) return 3;
              return 0;
            }),
            0);
}

TEST(CliSignalsTest, HandlersAreInstalledWithoutRestart) {
  EXPECT_EQ(in_child([] {
              install_stop_handlers();
              for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) {
                struct sigaction sa;
                if (sigaction(sig, nullptr, &sa) != 0) return 1;
                if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN) return 2;
                if (sa.sa_flags & SA_RESTART) return 3;
              }
              return 0;
            }),
            0);
}

// Puts fd on stdout in the child (the test's own stdout stays untouched).
bool stdout_is(int fd) { return dup2(fd, STDOUT_FILENO) == STDOUT_FILENO; }

TEST(CliSignalsTest, StdoutClosedOnPipe) {
  EXPECT_EQ(in_child([] {
              int fds[2];
              if (pipe(fds) != 0 || !stdout_is(fds[1])) return 1;
              if (stdout_closed()) return 2;  // reader still there
              close(fds[0]);
              if (!stdout_closed()) return 3;  // reader gone: tool | head
              return 0;
            }),
            0);
}

TEST(CliSignalsTest, FullPipeIsNotClosed) {
  EXPECT_EQ(in_child([] {
              int fds[2];
              if (pipe(fds) != 0 || !stdout_is(fds[1])) return 1;
              fcntl(fds[1], F_SETFL, O_NONBLOCK);
              char buf[4096] = {};
              while (write(fds[1], buf, sizeof buf) > 0) {
              }
              if (errno != EAGAIN) return 2;
              if (stdout_closed()) return 3;  // a slow reader is still a reader
              return 0;
            }),
            0);
}

TEST(CliSignalsTest, StdoutClosedOnSocket) {
  EXPECT_EQ(in_child([] {
              int fds[2];
              if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0 || !stdout_is(fds[0])) return 1;
              if (stdout_closed()) return 2;
              close(fds[1]);
              if (!stdout_closed()) return 3;
              return 0;
            }),
            0);
}

TEST(CliSignalsTest, FilesAndTerminalsAreNeverClosed) {
  EXPECT_EQ(in_child([] {
              FILE* f = std::tmpfile();
              if (!f || !stdout_is(fileno(f))) return 1;
              if (stdout_closed()) return 2;
              int null_fd = open("/dev/null", O_WRONLY);
              if (null_fd < 0 || !stdout_is(null_fd)) return 3;
              if (stdout_closed()) return 4;
              // A terminal whose other side hung up: that is SIGHUP's business.
              int master = posix_openpt(O_RDWR | O_NOCTTY);
              if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0) return 5;
              int slave = open(ptsname(master), O_RDWR | O_NOCTTY);
              if (slave < 0 || !stdout_is(slave)) return 6;
              if (stdout_closed()) return 7;
              close(master);
              if (stdout_closed()) return 8;
              return 0;
            }),
            0);
}

TEST(CliDeadlineTest, NoDeadline) {
  Deadline d(std::nullopt);
  EXPECT_FALSE(d.expired());
  EXPECT_EQ(d.poll_timeout_ms(100), 100);
  EXPECT_EQ(d.poll_timeout_ms(0), 0);
  EXPECT_EQ(d.poll_timeout_ms(-1), -1);
}

TEST(CliDeadlineTest, NonPositiveDurationsHaveExpired) {
  for (double s : {0.0, -1.0, -1e300, std::nan("")}) {
    Deadline d(s);
    EXPECT_TRUE(d.expired()) << s;
    EXPECT_EQ(d.poll_timeout_ms(100), 0) << s;
    EXPECT_EQ(d.poll_timeout_ms(-1), 0) << s;
  }
}

TEST(CliDeadlineTest, TimeoutIsCappedByTimeLeft) {
  Deadline d(3600.0);
  EXPECT_FALSE(d.expired());
  EXPECT_EQ(d.poll_timeout_ms(100), 100);
  EXPECT_EQ(d.poll_timeout_ms(0), 0);
  int left = d.poll_timeout_ms(-1);  // no cap: the time left
  EXPECT_GT(left, 3590 * 1000);
  EXPECT_LE(left, 3600 * 1000);
  EXPECT_LE(d.poll_timeout_ms(INT_MAX), 3600 * 1000);
}

TEST(CliDeadlineTest, HugeDurationsDoNotOverflow) {
  for (double s : {1e9, 1e12, 1e300, HUGE_VAL}) {
    Deadline d(s);
    EXPECT_FALSE(d.expired()) << s;
    EXPECT_EQ(d.poll_timeout_ms(-1), INT_MAX) << s;
    EXPECT_EQ(d.poll_timeout_ms(500), 500) << s;
  }
}

TEST(CliDeadlineTest, RoundsUpAndExpires) {
  Deadline d(0.0105);
  int ms = d.poll_timeout_ms(1000);
  EXPECT_LE(ms, 11);  // 10.5 ms rounds up, never beyond
  EXPECT_GE(ms, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(d.expired());
  EXPECT_EQ(d.poll_timeout_ms(1000), 0);
}

TEST(CliDeadlineTest, AdvanceKeepsTheScheduleNotTheDelay) {
  Deadline d(0.02);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  ASSERT_TRUE(d.expired());
  d.advance(10.0);  // from start + 20 ms, not from now (start + 30 ms or more)
  EXPECT_FALSE(d.expired());
  EXPECT_LE(d.poll_timeout_ms(-1), 9990);
  EXPECT_GT(d.poll_timeout_ms(-1), 5000);
}

TEST(CliDeadlineTest, AdvanceSkipsPeriodsAlreadyPast) {
  Deadline d(0.001);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  d.advance(0.005);  // start + 6 ms has passed: the next period ahead, not a backlog
  EXPECT_LE(d.poll_timeout_ms(-1), 5);
  Deadline none(std::nullopt);
  none.advance(1.0);
  EXPECT_FALSE(none.expired());
}

}  // namespace
}  // namespace tracekit::cli
