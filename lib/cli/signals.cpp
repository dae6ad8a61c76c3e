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

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
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

// A second stop from the user (SIGPIPE is not one: a closed pipe is no
// impatience) ends the process here and now. Teardown can take the kernel
// many seconds (each trigger removed costs an RCU grace period); what is
// left is swept by the next run of any tool, or reset-tracing. Only
// async-signal-safe calls.
[[noreturn]] void exit_now(int sig) {
  run_exit_writes();  // stop our instances from recording meanwhile
  say("\n");
  say(program_invocation_short_name);
  say(": stopped at once (second signal); what it created in tracefs is removed by the next "
      "run or by reset-tracing\n");
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
