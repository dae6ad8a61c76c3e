// How this works: the handler only records the signal in lock-free atomics
// (the one thing a handler may safely do); the tool's main loop polls
// stop_requested() and leaves through its normal path, so destructors undo
// whatever was created in tracefs and perf. The handlers are installed
// without SA_RESTART: a blocking poll()/read()/nanosleep() returns EINTR at
// once instead of waiting out its timeout. SIGPIPE is caught rather than left
// fatal, so a closed pipe (tool | head) turns into EPIPE and a clean exit
// instead of a death that would skip teardown. SIGQUIT (Ctrl-\\) is a stop
// like SIGTERM: dying on it would leave the run's instance recording. A
// second SIGINT/SIGTERM/SIGHUP/SIGQUIT ends the process at once (exit
// 128+signal), after setting tracing_on to 0 in our instances: a teardown of
// hundreds of events takes the kernel many seconds, and a user who presses
// Ctrl-C again wants out; the next run's sweep removes the rest.

#include "cli/signals.hpp"

#include "util/exit_writes.hpp"

#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <limits>
#include <mutex>

namespace tracekit::cli {

namespace {

std::atomic<int> g_first_signal{0};
std::atomic<bool> g_stop{false};
std::atomic<int> g_signals{0};  // stop signals received
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "signal handlers need lock-free atomics");

std::atomic<int> g_user_signals{0};  // SIGINT, SIGTERM, SIGHUP, SIGQUIT so far

void record(int sig) {
  if (sig != 0) {
    int none = 0;
    g_first_signal.compare_exchange_strong(none, sig);
    g_signals.fetch_add(1);
  }
  g_stop.store(true);
}

void say(const char* s) { (void)!::write(STDERR_FILENO, s, std::strlen(s)); }

// n in decimal into buf (at least 24 bytes), for the handler's messages.
const char* decimal(long n, char* buf) {
  char tmp[24];
  int i = 0;
  const bool neg = n < 0;
  unsigned long u = neg ? 0UL - static_cast<unsigned long>(n) : static_cast<unsigned long>(n);
  do tmp[i++] = static_cast<char>('0' + u % 10);
  while ((u /= 10) != 0);
  int j = 0;
  if (neg) buf[j++] = '-';
  while (i > 0) buf[j++] = tmp[--i];
  buf[j] = '\0';
  return buf;
}

// Calls f(fd, perf) for each open descriptor, perf saying whether it is a
// perf event (its link in /proc/self/fd reads "anon_inode:[perf_event]"),
// with open, getdents64 and readlink alone (async-signal-safe). f may close
// fd. Returns how many perf events there were.
template <typename F>
long each_fd(F f) {
  const int dir = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  static constexpr char kPerf[] = "anon_inode:[perf_event]";
  struct Dirent {
    uint64_t ino;
    int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
  };
  long n = 0;
  alignas(8) char buf[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      const auto* d = reinterpret_cast<const Dirent*>(buf + off);
      off += d->reclen;
      int fd = 0;
      bool number = d->name[0] != '\0';
      for (const char* c = d->name; *c; ++c) {
        if (*c < '0' || *c > '9') number = false;
        fd = fd * 10 + (*c - '0');
      }
      if (!number || fd == dir) continue;
      char path[64] = "/proc/self/fd/";
      std::strncat(path, d->name, sizeof path - std::strlen(path) - 1);
      char link[sizeof kPerf];
      const ssize_t len = ::readlink(path, link, sizeof link);
      const bool perf = len == static_cast<ssize_t>(sizeof kPerf - 1) &&
                        std::memcmp(link, kPerf, sizeof kPerf - 1) == 0;
      if (perf) ++n;
      f(fd, perf);
    }
  }
  ::close(dir);
  return n;
}

// The kernel releases a perf event on a trace event with a synchronisation
// when its last descriptor closes (45 to 90 ms each: funccount's counters
// on 802 uprobes took 65 s), and an exiting process is not gone until it
// has closed its descriptors, so _exit() alone would keep the user waiting
// that long. A child takes the perf descriptors over: it disables the
// events, closes every other descriptor (a pipe on stdout sees its end
// now), leaves the terminal's process group and ignores the stop signals,
// waits until this process is gone, then exits, and the kernel releases
// the events in it, in the background. Returns the child's pid, 0 when
// there is no perf descriptor, -1 when the fork failed (this process then
// closes them as it exits). Only async-signal-safe calls (_Fork, glibc
// 2.34: no atfork handlers).
pid_t hand_off_perf_fds(long* count) {
  *count = each_fd([](int, bool) {});
  if (*count == 0) return 0;
  const pid_t parent = ::getpid();
  const pid_t child = ::_Fork();
  if (child != 0) return child;
  struct sigaction ignore = {};
  ignore.sa_handler = SIG_IGN;
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::sigaction(sig, &ignore, nullptr);
  (void)::setsid();
  each_fd([](int fd, bool perf) {
    if (perf)
      (void)::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    else
      ::close(fd);
  });
  const struct timespec tick = {0, 10 * 1000 * 1000};
  while (::getppid() == parent) ::nanosleep(&tick, nullptr);
  ::_exit(0);
}

// A second stop from the user (SIGPIPE is not one: a closed pipe is no
// impatience) ends the process here and now. Teardown can take the kernel
// many seconds (each trigger removed costs an RCU grace period); what is
// left is swept by the next run of any tool, or reset-tracing. Only
// async-signal-safe calls.
[[noreturn]] void exit_now(int sig) {
  run_exit_writes();  // stop our instances from recording meanwhile
  long perf_fds = 0;
  const pid_t closer = hand_off_perf_fds(&perf_fds);
  char num[24];
  say("\n");
  say(program_invocation_short_name);
  say(": stopped at once (second signal); ");
  if (closer > 0) {
    say("the kernel releases its ");
    say(decimal(perf_fds, num));
    say(" perf events in process ");
    say(decimal(closer, num));
    say(" meanwhile, and ");
  }
  say("what it created in tracefs is removed by the next run or by reset-tracing\n");
  _exit(128 + sig);
}

std::atomic<int> g_writing{0};  // WritingOutput objects alive

void on_stop_signal(int sig) {
  if (sig != SIGPIPE && g_user_signals.fetch_add(1) >= 1 && g_writing.load() == 0) exit_now(sig);
  record(sig);
}

// Longer than any trace; keeps now() + duration inside steady_clock's range.
constexpr double kMaxSeconds = 1e9;

}  // namespace

void install_stop_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa = {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: blocking calls must return EINTR
    sigset_t ours;
    sigemptyset(&ours);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) {
      sigaction(sig, &sa, nullptr);
      sigaddset(&ours, sig);
    }
    // The signal mask is inherited across exec: a parent that had these
    // blocked would leave every Ctrl-C pending for ever, and the tool
    // running until SIGKILL.
    pthread_sigmask(SIG_UNBLOCK, &ours, nullptr);
  });
}

WritingOutput::WritingOutput() { g_writing.fetch_add(1); }
WritingOutput::~WritingOutput() { g_writing.fetch_sub(1); }

bool stop_requested() { return g_stop.load(); }

int stop_signal() { return g_first_signal.load(); }

int stop_signal_count() { return g_signals.load(); }

void request_stop(int sig) { record(sig); }

bool stdout_closed() {
  // Only a pipe or a socket has a reader that can go away; a terminal's
  // hangup arrives as SIGHUP, and files never close under us.
  struct stat st;
  if (fstat(STDOUT_FILENO, &st) != 0) return false;
  if (!S_ISFIFO(st.st_mode) && !S_ISSOCK(st.st_mode)) return false;
  // events = 0: POLLERR and POLLHUP are always reported, and asking for
  // nothing else keeps a full pipe from looking any different.
  struct pollfd p = {STDOUT_FILENO, 0, 0};
  if (poll(&p, 1, 0) != 1) return false;
  return (p.revents & (POLLERR | POLLHUP)) != 0;
}

Deadline::Deadline(std::optional<double> seconds) {
  if (!seconds) return;
  double s = *seconds;
  if (!(s > 0)) s = 0;  // also NaN: a nonsense duration ends at once
  s = std::min(s, kMaxSeconds);
  end_ = std::chrono::steady_clock::now() +
         std::chrono::duration_cast<std::chrono::steady_clock::duration>(
             std::chrono::duration<double>(s));
}

bool Deadline::expired() const { return end_ && std::chrono::steady_clock::now() >= *end_; }

int Deadline::poll_timeout_ms(int max_ms) const {
  if (!end_) return max_ms;
  auto left = *end_ - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  // Rounded up: waking a fraction of a millisecond early would only lead to
  // a few polls with timeout 0 spinning until the deadline.
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  long long cap = max_ms < 0 ? std::numeric_limits<int>::max() : max_ms;
  return static_cast<int>(std::min<long long>(ms, cap));
}

void Deadline::advance(double seconds) {
  if (!end_ || !(seconds > 0)) return;
  const auto step = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double>(std::min(seconds, kMaxSeconds)));
  const auto now = std::chrono::steady_clock::now();
  *end_ += step;
  if (*end_ <= now) *end_ += step * ((now - *end_) / step + 1);
}

void sleep_unless_stopped(int ms) {
  // poll() with no fds sleeps, and a handler installed without SA_RESTART
  // cuts it short with EINTR.
  if (!stop_requested()) ::poll(nullptr, 0, ms);
}

}  // namespace tracekit::cli
