// Helpers for runtime tests: run a tool and capture its output, start a
// workload and wait until it says it is ready, parse tool output.
// Paths: TRACEKIT_BIN (default build/bin) and TRACEKIT_WORKLOADS (default
// build/workloads), relative to the directory the tests run in.
#pragma once

#include <gtest/gtest.h>
#include <sys/types.h>

#include <cstdint>
#include <map>
#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tracekit::testing {

std::string tool_path(const std::string& tool);
std::string workload_path(const std::string& name);
// An LD_PRELOAD shim of tests/shims (build/tests/NAME.so), as an absolute path.
std::string shim_path(const std::string& name);

// Of folded output, the samples of the shortlived workload, and those of them
// whose stack resolved to main calling shortlived_burn (its truth: nearly all).
struct ShortlivedSamples {
  unsigned long all = 0, burn = 0;
};
ShortlivedSamples shortlived_samples(const std::string& folded);

struct RunResult {
  int exit_code = -1;  // exit status, or 128 + signal when killed
  std::string out;
  std::string err;
  bool timed_out = false;
};

// Runs argv[0] (a path) with the arguments, waits at most timeout_s (then
// SIGKILLs it and sets timed_out).
RunResult run(const std::vector<std::string>& argv, double timeout_s = 60);

// A tool running in the background, its output collected as it comes.
class Running {
 public:
  explicit Running(const std::vector<std::string>& argv);
  ~Running();  // if finish() was not called: SIGINT, then finish(10)
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;

  // Reads output until stdout contains text (times times: true) or
  // timeout_s passes or the process closes its output (false).
  bool wait_for_stdout(const std::string& text, double timeout_s, int times = 1);
  // The same for stderr.
  bool wait_for_stderr(const std::string& text, double timeout_s);
  void signal(int sig);
  // Collects the rest of the output and the exit status (SIGKILL after
  // timeout_s).
  RunResult finish(double timeout_s);
  pid_t pid() const { return pid_; }

 private:
  friend class PerfToolsPeer;  // (wait_for_end)
  bool pump(int timeout_ms);  // false when both pipes are closed
  bool wait_for(const std::string& where, const std::string& text, double timeout_s,
                int times = 1);
  pid_t pid_ = -1;
  int fds_[2] = {-1, -1};
  RunResult r_;
  bool done_ = false;
};

// TRACEKIT_KERNEL_FEATURES for the tools a test starts while this lives:
// features ("-kprobes,-eprobes") added to what is forced already (the
// fallback pass of scripts/check forces some for the whole test binary), or
// instead of it (add false; "" forces nothing); the value before is put
// back at the end.
class ForcedFeatures {
 public:
  explicit ForcedFeatures(const std::string& features, bool add = true);
  ~ForcedFeatures();
  ForcedFeatures(const ForcedFeatures&) = delete;
  ForcedFeatures& operator=(const ForcedFeatures&) = delete;

 private:
  std::optional<std::string> before_;
};

// One spinning child process per online CPU, pinned there at nice 19, for
// as long as this lives (killed by PID and reaped at the end): keeps every
// CPU out of its idle task. This VM's kernel reports no sched_switch, and no
// sched_wakeup, from a CPU's idle context (KERNEL-NOTES), which is all that
// offcputime has of a switch-in on kernels without context-switch records.
class BusyCpus {
 public:
  BusyCpus();
  ~BusyCpus();
  BusyCpus(const BusyCpus&) = delete;
  BusyCpus& operator=(const BusyCpus&) = delete;

 private:
  std::vector<pid_t> pids_;
};

// A child process started from a workload binary; it must print a line
// "ready PID" first. Killed (SIGKILL, by PID) and reaped on destruction.
class Workload {
 public:
  Workload(const std::string& name, const std::vector<std::string>& args = {});
  ~Workload();
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;
  pid_t pid() const { return pid_; }
  std::string pid_str() const { return std::to_string(pid_); }
  // sched_setaffinity to one CPU.
  void pin(int cpu);
  // Writes one byte to the workload's stdin (its "go").
  void go();
  // Reads the workload's stdout until a line equal to line arrives (true) or
  // timeout_s passes (false).
  bool wait_line(const std::string& line, double timeout_s);
  // Every line read so far by wait_line(), in order.
  const std::vector<std::string>& lines() const { return lines_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;   // its stdin
  int out_ = -1;  // its stdout
  std::string buffered_;
  std::vector<std::string> lines_;
};

// The cpuratio workload's CPU time in func_a and func_b so far, asked
// through its stdin (tests/workloads/cpuratio.c). Ask before and after a
// profile: b_fraction() of the two is the truth for the profile's window.
struct CpuRatioTimes {
  unsigned long long a_ns = 0, b_ns = 0;
};
CpuRatioTimes cpuratio_times(Workload& w);
// func_b's share of the CPU time spent in the two between before and after.
double b_fraction(const CpuRatioTimes& before, const CpuRatioTimes& after);

// Waits until process pid holds at least n perf event file descriptors
// (a tool has opened its events). False after timeout_s.
bool wait_for_perf_fds(pid_t pid, int n, double timeout_s);

// Waits until a tool is tracing: it holds n perf event file descriptors and
// its main thread is blocked in poll(2), which the tools call only from their
// main loop, after every event is enabled (/proc/PID/syscall). For folded
// output, which has no header line to wait for. False after timeout_s.
bool wait_for_tracing(pid_t pid, int n, double timeout_s);

// What tracekit could leave behind in tracefs, as text: the instances, the
// dynamic events, every top-level trigger and enabled event, the current
// tracer, the top-level trace options and tracing_on, leaving out the runs
// of processes this test binary did not start
// (Running, run(), Workload, start_tracing_child): other tracekit runs and
// test binaries, alive or killed, whose leftovers any tool's start may sweep
// meanwhile. Two snapshots around a run must be equal.
std::string tracefs_snapshot();

// What tracekit could leave behind in the tracefs at tracing_dir, one entry
// per line: the instances ("instance NAME", sorted), the probe definitions
// ("dynamic_events: LINE", ... in list order) and the trigger lines that are
// set on top-level events ("trigger EVENT_DIR: LINE", by event, in file
// order). Entries named "tracekit..." (instances, probe groups, event
// systems) whose owner pid (tracefs::owner_pid) is not in ours are left out:
// other tracekit runs, live or killed, whose leftovers a sweep may remove
// meanwhile. Unlike tracefs_snapshot(), for tests that sweep leftovers
// themselves.
std::vector<std::string> tracefs_objects(const std::string& tracing_dir, const std::set<int>& ours);

// The uprobes of a running tool's probe group (tracekit_PID), as
// uprobe_events lists them without the "p:tracekit_PID/" ("EVENT place
// args"), one per probe; and the distinct events among them.
std::vector<std::string> uprobes_of(pid_t tool);
std::set<std::string> uprobe_events_of(pid_t tool);

// A file's content; "" when it cannot be read.
std::string slurp(const std::string& path);

// A directory of its own under /tmp for a test's files, removed with them.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  // The names in it, sorted.
  std::vector<std::string> names() const;

 private:
  std::string path_;
};

// text split at newlines (no empty last line for a final newline).
std::vector<std::string> lines_of(const std::string& text);

// A run of a tool (argv: "PID" replaced by the hostile workload's pid) while
// tests/workloads/hostile.c puts newlines and escape sequences into its comm,
// a file name and exec arguments. ready: the tool's stdout text that says it
// traces; live runs (ready ending in "Ctrl-C to end.\n") are ended by SIGINT
// once the workload is done, others end by themselves.
struct HostileRun {
  RunResult r;
  pid_t pid = 0;
  bool done = false;  // the workload did all it does
};
HostileRun run_against_hostile(std::vector<std::string> argv, const std::string& ready);

// What in text a terminal would act on: bytes below 0x20 but newline, DEL,
// and C1 controls as UTF-8 (C2 80-C2 9F); "" when there is none, else where
// the first one is and the text around it.
std::string terminal_controls(const std::string& text);

// A test that traces: skips without root, saying so, and fails when tracefs
// is not after the test as it was before (tracefs_snapshot()).
class TracingTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  std::string before_;  // tracefs_snapshot() at the start
};

// A perf-tools script as a peer (Debian's perf-tools-unstable installs them
// as /usr/sbin/<tool>-perf). They trace on debugfs's tracing directory,
// which this mounts if needed (and unmounts after), and the top-level
// buffer, under perf-tools' lock file.
class PerfToolsPeer {
 public:
  explicit PerfToolsPeer(const std::string& tool);
  ~PerfToolsPeer();
  PerfToolsPeer(const PerfToolsPeer&) = delete;
  PerfToolsPeer& operator=(const PerfToolsPeer&) = delete;
  // False (with why_not()) when the script is missing or another
  // perf-tools run holds the lock.
  bool usable() const { return why_not_.empty(); }
  const std::string& why_not() const { return why_not_; }
  // Starts the script with args and waits until it traces: it prints its
  // header before it enables the event and clears the buffer after, so
  // ready is when its reader runs: `cat trace_pipe`, or reader (a command
  // line, NUL-separated: iolatency-perf's "sleep\0001\0", which reads the
  // buffer after each sleep). False after 30 s.
  bool start(const std::vector<std::string>& args,
             const std::string& reader = std::string("cat\0trace_pipe\0", 15));
  // Reads its output until it contains text n times (false after timeout_s).
  bool wait_for_stdout(const std::string& text, int n, double timeout_s) {
    return run_ && run_->wait_for_stdout(text, timeout_s, n);
  }
  // Reads its output until the script has closed it (it has ended by itself:
  // a duration); false after timeout_s.
  bool wait_for_end(double timeout_s) {
    if (!run_) return false;
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < end)
      if (!run_->pump(100)) return true;
    return false;
  }
  // Waits until it has read every event (no CPU's buffer holds an unread
  // entry), then ends it as Ctrl-C would (SIGINT to its reader, to the
  // reader's subshell when that is not the script itself, then to it) and
  // returns its output.
  RunResult finish();

 private:
  std::string script_, why_not_, reader_;
  bool mounted_ = false;
  std::optional<Running> run_;
  pid_t cat_ = 0;  // the reader
  bool finished_ = false;
};

// Runs our tool (argv) and a perf-tools peer (peer_args) at the same time on
// the same events: ours until its header says it traces ("Ctrl-C to end."),
// then the peer until it reads; then the workload w goes (SIGUSR1) and
// finishes ("done"), and both end as Ctrl-C ends them. Test failures are
// reported through gtest; the results may then be empty.
struct PeerRuns {
  RunResult ours, theirs;
};
PeerRuns trace_with_peer(PerfToolsPeer& peer, const std::vector<std::string>& argv,
                         const std::vector<std::string>& peer_args, Workload& w);

// The CPU time process pid has used (user + system, /proc/PID/stat), seconds.
double cpu_seconds(pid_t pid);

bool contains(const std::string& hay, const std::string& needle);

// The file offset of an ELF executable's entry point.
std::optional<uint64_t> entry_offset(const std::string& path);

// SIGKILLs pid and reaps it.
void kill_and_reap(pid_t pid);

// A child process that sets up in the tracefs at tracing_dir like a tool: an
// instance with a stacktrace trigger on sched_switch, which it enables, and a
// uprobe group whose probe (on /bin/true's entry) the instance enables, with
// a trigger too. It reports the names, then waits for SIGKILL (nothing is
// undone). pid is -1 when it could not start, instance is empty when it could
// not set up.
struct TracingChild {
  pid_t pid = -1;
  std::string instance, group, event;
};
TracingChild start_tracing_child(const std::string& tracing_dir);

// Folded output "a;b;c 12" lines -> stack string -> count (summed when a
// stack repeats).
std::map<std::string, unsigned long> parse_folded(const std::string& text);

// Frames of a folded stack, split at ';'.
std::vector<std::string> frames_of(const std::string& folded_stack);

// bcc multi-line records ("    frame" lines, "    -   comm (pid)", value
// line, blank line) -> records.
struct MultilineRecord {
  std::vector<std::string> frames;  // as printed, leaf first, without indent
  std::string comm;
  long pid = -1;
  unsigned long value = 0;
};
std::vector<MultilineRecord> parse_multiline(const std::string& text);

}  // namespace tracekit::testing
