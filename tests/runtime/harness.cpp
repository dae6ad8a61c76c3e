#include "harness.hpp"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <cstring>
#include <cerrno>

#include "tracefs/dynamic_events.hpp"
#include "tracefs/instance.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::testing {

namespace {

// The processes this test binary started (tools, workloads, tracing
// children): what they leave in tracefs is the tests' business.
std::set<pid_t>& spawned() {
  static std::set<pid_t> pids;
  return pids;
}

std::string env_or(const char* name, const char* dflt) {
  const char* v = std::getenv(name);
  return v && *v ? v : dflt;
}

std::vector<char*> c_argv(const std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (auto& a : argv) v.push_back(const_cast<char*>(a.c_str()));
  v.push_back(nullptr);
  return v;
}

int decode_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

std::string tool_path(const std::string& tool) { return env_or("TRACEKIT_BIN", "build/bin") + "/" + tool; }
std::string workload_path(const std::string& name) {
  return env_or("TRACEKIT_WORKLOADS", "build/workloads") + "/" + name;
}
std::string shim_path(const std::string& name) {
  return std::filesystem::absolute(env_or("TRACEKIT_SHIMS", "build/tests") + "/" + name + ".so")
      .string();
}

Running::Running(const std::vector<std::string>& argv) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ > 0) spawned().insert(pid_);
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    // A test binary started in the background by a shell ignores SIGINT
    // and SIGQUIT, and a child inherits that: give it the defaults a
    // terminal's Ctrl-C meets (a perf-tools script's cat would not end).
    ::signal(SIGINT, SIG_DFL);
    ::signal(SIGQUIT, SIG_DFL);
    auto args = c_argv(argv);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  fds_[0] = out[0];
  fds_[1] = err[0];
}

Running::~Running() {
  // A test that stopped early (a failed ASSERT) ends the tool as a user
  // would, so that it cleans up after itself and the tests after it start
  // from a clean tracefs; SIGKILL only if it does not end in 10 s.
  if (!done_ && pid_ > 0) {
    kill(pid_, SIGINT);
    finish(10);
  }
  for (int fd : fds_)
    if (fd >= 0) close(fd);
}

bool Running::pump(int timeout_ms) {
  pollfd p[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
  if (fds_[0] < 0 && fds_[1] < 0) return false;
  if (poll(p, 2, timeout_ms) <= 0) return true;
  std::string* bufs[2] = {&r_.out, &r_.err};
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
    char buf[65536];
    ssize_t n = read(fds_[i], buf, sizeof buf);
    if (n > 0) {
      bufs[i]->append(buf, static_cast<size_t>(n));
    } else {
      close(fds_[i]);
      fds_[i] = -1;
    }
  }
  return fds_[0] >= 0 || fds_[1] >= 0;
}

bool Running::wait_for_stdout(const std::string& text, double timeout_s, int times) {
  return wait_for(r_.out, text, timeout_s, times);
}

bool Running::wait_for_stderr(const std::string& text, double timeout_s) {
  return wait_for(r_.err, text, timeout_s);
}

bool Running::wait_for(const std::string& where, const std::string& text, double timeout_s,
                       int times) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  auto seen = [&] {
    int n = 0;
    for (size_t at = where.find(text); at != std::string::npos && n < times;
         at = where.find(text, at + text.size()))
      ++n;
    return n >= times;
  };
  while (!seen()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !pump(static_cast<int>(left.count()))) return false;
  }
  return true;
}

void Running::signal(int sig) { kill(pid_, sig); }

RunResult Running::finish(double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid_, SIGKILL);
      r_.timed_out = true;
      break;
    }
    if (!pump(static_cast<int>(left.count()))) break;
  }
  int status = 0;
  waitpid(pid_, &status, 0);
  done_ = true;
  r_.exit_code = decode_status(status);
  return r_;
}

RunResult run(const std::vector<std::string>& argv, double timeout_s) {
  Running r(argv);
  return r.finish(timeout_s);
}

Workload::Workload(const std::string& name, const std::vector<std::string>& args) {
  int out[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) throw std::runtime_error("pipe");
  std::vector<std::string> argv{workload_path(name)};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ > 0) spawned().insert(pid_);
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(in[0], 0);
    auto a = c_argv(argv);
    execv(a[0], a.data());
    _exit(127);
  }
  close(out[1]);
  close(in[0]);
  out_ = out[0];
  in_ = in[1];
  // "ready PID": the workload is running after this.
  if (!wait_line("ready " + std::to_string(pid_), 10))
    throw std::runtime_error("workload " + name + " did not become ready: '" + buffered_ + "'");
}

Workload::~Workload() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (in_ >= 0) close(in_);
  if (out_ >= 0) close(out_);
}

void Workload::go() {
  if (write(in_, "g", 1) != 1) throw std::runtime_error("cannot write to the workload");
}

bool Workload::wait_line(const std::string& line, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  for (;;) {
    size_t nl;
    while ((nl = buffered_.find('\n')) != std::string::npos) {
      std::string got = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      lines_.push_back(got);
      if (got == line) return true;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[256];
    ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return false;
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

CpuRatioTimes cpuratio_times(Workload& w) {
  w.go();
  if (!w.wait_line("done", 10)) throw std::runtime_error("cpuratio did not report its times");
  const auto& lines = w.lines();
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    CpuRatioTimes t;
    if (std::sscanf(it->c_str(), "cpu %llu %llu", &t.a_ns, &t.b_ns) == 2) return t;
  }
  throw std::runtime_error("cpuratio's times line is missing");
}

double b_fraction(const CpuRatioTimes& before, const CpuRatioTimes& after) {
  const double a = static_cast<double>(after.a_ns - before.a_ns);
  const double b = static_cast<double>(after.b_ns - before.b_ns);
  return a + b > 0 ? b / (a + b) : 0;
}

bool wait_for_perf_fds(pid_t pid, int n, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  while (std::chrono::steady_clock::now() < deadline) {
    int count = 0;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        char target[256];
        ssize_t len = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        if (len <= 0) continue;
        target[len] = 0;
        if (std::string(target) == "anon_inode:[perf_event]") ++count;
      }
      closedir(d);
    }
    if (count >= n) return true;
    usleep(2000);  // polling /proc: nothing to block on
  }
  return false;
}

bool wait_for_tracing(pid_t pid, int n, double timeout_s) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  if (!wait_for_perf_fds(pid, n, timeout_s)) return false;
  std::string path = "/proc/" + std::to_string(pid) + "/syscall";
  const std::string poll_nr = std::to_string(SYS_poll) + " ";
  const std::string ppoll_nr = std::to_string(SYS_ppoll) + " ";
  while (std::chrono::steady_clock::now() < deadline) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    if (line.rfind(poll_nr, 0) == 0 || line.rfind(ppoll_nr, 0) == 0) return true;
    usleep(1000);  // polling /proc: nothing to block on
  }
  return false;
}

ForcedFeatures::ForcedFeatures(const std::string& features, bool add) {
  if (const char* v = getenv("TRACEKIT_KERNEL_FEATURES")) before_ = v;
  std::string value = features;
  if (add && before_ && !before_->empty()) value = *before_ + "," + features;
  setenv("TRACEKIT_KERNEL_FEATURES", value.c_str(), 1);
}

ForcedFeatures::~ForcedFeatures() {
  if (before_)
    setenv("TRACEKIT_KERNEL_FEATURES", before_->c_str(), 1);
  else
    unsetenv("TRACEKIT_KERNEL_FEATURES");
}

BusyCpus::BusyCpus() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  for (int cpu = 0; cpu < n; ++cpu) {
    pid_t pid = fork();
    if (pid == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      sched_setaffinity(0, sizeof set, &set);
      if (nice(19) == -1 && errno != 0) _exit(1);
      for (;;) asm volatile("" ::: "memory");  // spin
    }
    if (pid > 0) pids_.push_back(pid);
  }
}

BusyCpus::~BusyCpus() {
  for (pid_t p : pids_) kill_and_reap(p);
}

void Workload::pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(pid_, sizeof set, &set) != 0) throw std::runtime_error("sched_setaffinity");
}

namespace {

// "tracekit_<pid>[_<n>]" (or "tracekit_test_<pid>_<n>", ftrace_test's
// instances) of a process that is neither this one nor one it started:
// another tracekit run or test binary, alive or killed, whose leftovers a
// sweep (any tool's, at its start) may remove at any time. Not something
// this binary's tests left.
bool someone_elses_run(const std::string& name) {
  if (name.rfind("tracekit_", 0) != 0) return false;
  std::string rest = name.substr(9);
  if (rest.rfind("test_", 0) == 0) rest = rest.substr(5);
  rest = rest.substr(0, rest.find('_'));
  if (rest.empty() || !std::all_of(rest.begin(), rest.end(), ::isdigit)) return false;
  pid_t pid = static_cast<pid_t>(std::stol(rest));
  return pid != getpid() && spawned().count(pid) == 0;
}

}  // namespace

std::string tracefs_snapshot() {
  const std::string t = "/sys/kernel/tracing";
  std::string snap;
  auto file = [&](const std::string& rel) {
    std::ifstream in(t + "/" + rel);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    snap += "== " + rel + "\n" + text;
  };
  snap += "== instances\n";
  if (DIR* d = opendir((t + "/instances").c_str())) {
    std::vector<std::string> names;
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') names.push_back(e->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    for (auto& n : names)
      if (!someone_elses_run(n)) snap += n + "\n";
  }
  for (const char* f : {"dynamic_events", "uprobe_events", "kprobe_events"}) {
    std::ifstream in(t + "/" + f);
    std::string line;
    snap += std::string("== ") + f + "\n";
    while (std::getline(in, line)) {
      // "p:tracekit_123/event ...": the group names its run.
      auto colon = line.find(':'), slash = line.find('/');
      if (colon != std::string::npos && slash != std::string::npos && slash > colon &&
          someone_elses_run(line.substr(colon + 1, slash - colon - 1)))
        continue;
      snap += line + "\n";
    }
  }
  for (const char* f : {"set_event", "current_tracer", "tracing_on", "trace_options"}) file(f);
  // Non-comment lines of every event's trigger file.
  if (DIR* systems = opendir((t + "/events").c_str())) {
    while (dirent* s = readdir(systems)) {
      if (s->d_name[0] == '.') continue;
      std::string sys = t + "/events/" + s->d_name;
      DIR* events = opendir(sys.c_str());
      if (!events) continue;
      while (dirent* e = readdir(events)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream in(sys + "/" + e->d_name + "/trigger");
        std::string line;
        while (std::getline(in, line))
          if (!line.empty() && line[0] != '#')
            snap += std::string("trigger ") + s->d_name + "/" + e->d_name + ": " + line + "\n";
      }
      closedir(events);
    }
    closedir(systems);
  }
  return snap;
}

std::vector<std::string> tracefs_objects(const std::string& top, const std::set<int>& ours) {
  namespace fs = std::filesystem;
  auto foreign = [&](const std::string& name) {
    // Names like "tracekit_bench_<pid>" (other tools of the project) too.
    return name.rfind("tracekit", 0) == 0 && !ours.count(tracefs::owner_pid(name));
  };
  std::vector<std::string> s;
  for (auto& e : fs::directory_iterator(top + "/instances"))
    if (!foreign(e.path().filename())) s.push_back("instance " + e.path().filename().string());
  std::sort(s.begin(), s.end());
  for (const char* f : {"dynamic_events", "uprobe_events", "kprobe_events"}) {
    const std::string text = slurp(top + "/" + f);
    for (auto line : split(text, '\n'))
      if (!line.empty() && !foreign(tracefs::parse_probe_line(line).group))
        s.push_back(std::string(f) + ": " + std::string(line));
  }
  std::map<std::string, std::vector<std::string>> triggers;  // by event directory
  for (auto& sys : fs::directory_iterator(top + "/events")) {
    if (!sys.is_directory() || foreign(sys.path().filename())) continue;
    for (auto& ev : fs::directory_iterator(sys.path())) {
      if (!ev.is_directory()) continue;
      const std::string text = slurp(ev.path().string() + "/trigger");
      for (auto line : split(text, '\n'))
        if (!tracefs::trigger_removal(line).empty())
          triggers[ev.path().string()].push_back(std::string(line));
    }
  }
  for (auto& [ev, lines] : triggers)
    for (auto& l : lines) s.push_back("trigger " + ev + ": " + l);
  return s;
}

std::string slurp(const std::string& path) {
  auto t = read_file(path);
  return t ? *t : std::string();
}

TempDir::TempDir() {
  char tmpl[] = "/tmp/tracekit-test-XXXXXX";
  const char* p = mkdtemp(tmpl);
  EXPECT_NE(p, nullptr) << "mkdtemp: " << std::strerror(errno);
  path_ = p ? p : "/tmp";
}

TempDir::~TempDir() {
  if (path_ != "/tmp") std::filesystem::remove_all(path_);
}

std::vector<std::string> TempDir::names() const {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(path_))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The pid of a descendant of parent (a child, or a child of a subshell of
// it, as iosnoop-perf's "( cat trace_pipe ) | awk" makes) whose command line
// is argv (NUL-separated); 0 when there is none.
pid_t child_running(pid_t parent, const std::string& argv) {
  std::map<long, long> ppid_of;
  std::vector<long> matches;
  for (const auto& d : std::filesystem::directory_iterator("/proc")) {
    auto pid = parse_int<int>(d.path().filename().string());
    if (!pid) continue;
    std::string stat = slurp(d.path().string() + "/stat");
    auto close = stat.rfind(") ");
    if (close == std::string::npos) continue;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    ppid_of[*pid] = ppid;
    if (slurp(d.path().string() + "/cmdline") == argv) matches.push_back(*pid);
  }
  for (long pid : matches)
    for (long up = ppid_of[pid], depth = 0; up > 1 && depth < 4; up = ppid_of[up], ++depth)
      if (up == parent) return static_cast<pid_t>(pid);
  return 0;
}

constexpr const char* kDebugTracing = "/sys/kernel/debug/tracing";

}  // namespace

PerfToolsPeer::PerfToolsPeer(const std::string& tool) : script_("/usr/sbin/" + tool + "-perf") {
  if (access(script_.c_str(), X_OK) != 0) {
    why_not_ = script_ + " is missing: perf-tools-unstable is not installed (make deps installs it)";
    return;
  }
  if (access("/var/tmp/.ftrace-lock", F_OK) == 0) {
    why_not_ = "perf-tools' lock /var/tmp/.ftrace-lock is held: another perf-tools run";
    return;
  }
  if (access((std::string(kDebugTracing) + "/events").c_str(), F_OK) != 0) {
    if (mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr) != 0) {
      why_not_ = std::string("cannot mount debugfs: ") + strerror(errno);
      return;
    }
    mounted_ = true;
  }
}

PerfToolsPeer::~PerfToolsPeer() {
  // A test that stopped early ends the script as Ctrl-C would, so that it
  // cleans up after itself.
  if (run_ && !finished_) (void)finish();
  run_.reset();
  if (mounted_) umount("/sys/kernel/debug");
}

bool PerfToolsPeer::start(const std::vector<std::string>& args, const std::string& reader) {
  std::vector<std::string> argv{script_};
  argv.insert(argv.end(), args.begin(), args.end());
  run_.emplace(argv);
  reader_ = reader;
  for (int i = 0; i < 600 && !(cat_ = child_running(run_->pid(), reader)); ++i) usleep(50000);
  if (!cat_) why_not_ = script_ + " never started reading the trace buffer";
  return cat_ != 0;
}

RunResult PerfToolsPeer::finish() {
  auto unread = [] {
    long n = 0;
    for (const auto& d : std::filesystem::directory_iterator(std::string(kDebugTracing) + "/per_cpu")) {
      std::istringstream in(slurp(d.path().string() + "/stats"));
      for (std::string l; std::getline(in, l);)
        if (l.rfind("entries: ", 0) == 0) n += std::stol(l.substr(9));
    }
    return n;
  };
  for (int i = 0; i < 200 && unread() > 0; ++i) usleep(50000);
  // A script that has ended by itself (a duration) has no reader left to
  // look for.
  const std::string stat = slurp("/proc/" + std::to_string(run_->pid()) + "/stat");
  const auto paren = stat.rfind(") ");
  if (paren == std::string::npos || stat.compare(paren + 2, 1, "Z") == 0) cat_ = 0;
  // The reader now (a script that sleeps between reads runs a new sleep
  // each time).
  if (cat_) {
    cat_ = 0;
    for (int i = 0; i < 100 && !(cat_ = child_running(run_->pid(), reader_)); ++i) usleep(20000);
  }
  if (cat_) {
    // A loop in a pipeline's subshell ("while ...; do sleep; ...; done |
    // awk") goes on when only its child is interrupted: a terminal's Ctrl-C
    // reaches the whole process group.
    std::string stat = slurp("/proc/" + std::to_string(cat_) + "/stat");
    auto close = stat.rfind(") ");
    long ppid = 0;
    if (close != std::string::npos) {
      std::istringstream rest(stat.substr(close + 2));
      std::string state;
      rest >> state >> ppid;
    }
    if (ppid > 1 && ppid != run_->pid()) kill(static_cast<pid_t>(ppid), SIGINT);
    kill(cat_, SIGINT);
  }
  run_->signal(SIGINT);
  finished_ = true;
  return run_->finish(60);
}

PeerRuns trace_with_peer(PerfToolsPeer& peer, const std::vector<std::string>& argv,
                         const std::vector<std::string>& peer_args, Workload& w) {
  PeerRuns r;
  Running ours(argv);
  if (!ours.wait_for_stdout("Ctrl-C to end.\n", 60)) {
    ADD_FAILURE() << argv[0] << " printed no header";
    return r;
  }
  if (!peer.start(peer_args)) {
    ADD_FAILURE() << peer.why_not();
    ours.signal(SIGINT);  // ends as a user's run ends, cleaning up
    r.ours = ours.finish(60);
    return r;
  }
  kill(w.pid(), SIGUSR1);
  EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
  r.theirs = peer.finish();
  ours.signal(SIGINT);
  r.ours = ours.finish(60);
  return r;
}

void TracingTest::SetUp() {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs and perf_event_open";
  before_ = tracefs_snapshot();
}

void TracingTest::TearDown() {
  if (geteuid() == 0 && !IsSkipped()) {
    EXPECT_EQ(tracefs_snapshot(), before_) << "tracefs was left changed";
  }
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> v;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

double cpu_seconds(pid_t pid) {
  const std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream rest(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 13 && rest >> field; ++i) {  // fields 3..13: state .. majflt
  }
  rest >> utime >> stime;                          // fields 14, 15
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::optional<uint64_t> entry_offset(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  Elf64_Ehdr eh;
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh)) return std::nullopt;
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph;
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + i * sizeof ph));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return std::nullopt;
    if (ph.p_type == PT_LOAD && eh.e_entry >= ph.p_vaddr && eh.e_entry < ph.p_vaddr + ph.p_filesz)
      return eh.e_entry - ph.p_vaddr + ph.p_offset;
  }
  return std::nullopt;
}

void kill_and_reap(pid_t pid) {
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
}

TracingChild start_tracing_child(const std::string& top) {
  int p[2];
  if (pipe(p) != 0) return {};
  pid_t pid = fork();
  if (pid > 0) spawned().insert(pid);
  if (pid == 0) {
    close(p[0]);
    std::string msg;
    {
      auto i = tracefs::Instance::create(top);
      auto g = tracefs::ProbeGroup::open(top);
      auto off = entry_offset("/bin/true");
      if (!i || !g || !off) _exit(1);
      auto e = g->add_uprobe("/bin/true", *off, false, "entry");
      if (!e || !i->add_trigger("sched", "sched_switch", "stacktrace if common_pid == 1") ||
          !i->enable_event("sched", "sched_switch") || !i->enable_event(g->name(), *e) ||
          !i->add_trigger(g->name(), *e, "stacktrace"))
        _exit(1);
      msg = i->name() + " " + g->name() + " " + *e + "\n";
      if (write(p[1], msg.data(), msg.size()) < 0) _exit(1);
      for (;;) pause();  // SIGKILL ends it: nothing is undone
    }
  }
  close(p[1]);
  TracingChild c;
  c.pid = pid;
  std::string got;
  char buf[256];
  ssize_t n;
  while ((n = read(p[0], buf, sizeof buf)) > 0) {
    got.append(buf, static_cast<size_t>(n));
    if (got.find('\n') != std::string::npos) break;
  }
  close(p[0]);
  std::istringstream in(got);
  in >> c.instance >> c.group >> c.event;
  return c;
}

std::map<std::string, unsigned long> parse_folded(const std::string& text) {
  std::map<std::string, unsigned long> m;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    auto sp = line.rfind(' ');
    if (sp == std::string::npos) continue;
    m[line.substr(0, sp)] += std::stoul(line.substr(sp + 1));
  }
  return m;
}

std::vector<std::string> frames_of(const std::string& s) {
  std::vector<std::string> v;
  std::string cur;
  std::istringstream in(s);
  while (std::getline(in, cur, ';')) v.push_back(cur);
  return v;
}

std::vector<MultilineRecord> parse_multiline(const std::string& text) {
  std::vector<MultilineRecord> recs;
  MultilineRecord cur;
  std::istringstream in(text);
  std::string line;
  bool in_record = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      in_record = false;
      continue;
    }
    if (line.rfind("    ", 0) != 0) continue;  // header and other text
    std::string body = line.substr(4);
    if (body.rfind("    ", 0) == 0) {  // value line: 8 spaces
      cur.value = std::stoul(body.substr(4));
      recs.push_back(cur);
      cur = {};
      continue;
    }
    if (body.rfind("- ", 0) == 0 && body.size() > 17 && body.back() == ')') {
      auto open = body.rfind(" (");
      cur.comm = body.substr(17, open - 17);
      cur.pid = std::stol(body.substr(open + 2, body.size() - open - 3));
      continue;
    }
    in_record = true;
    cur.frames.push_back(body);
  }
  (void)in_record;
  return recs;
}

ShortlivedSamples shortlived_samples(const std::string& folded) {
  ShortlivedSamples s;
  for (auto& [stack, n] : parse_folded(folded)) {
    auto fr = frames_of(stack);
    if (fr.empty() || fr[0] != "shortlived") continue;
    s.all += n;
    auto m = std::find(fr.begin(), fr.end(), "main");
    auto b = std::find(fr.begin(), fr.end(), "shortlived_burn");
    if (m != fr.end() && b != fr.end() && m < b) s.burn += n;
  }
  return s;
}

std::vector<std::string> uprobes_of(pid_t tool) {
  std::vector<std::string> out;
  auto dir = tracefs::tracing_dir();
  if (!dir) return out;
  const std::string group = "p:tracekit_" + std::to_string(tool) + "/";
  auto text = read_file(*dir + "/uprobe_events");
  if (!text) return out;
  for (const auto& l : lines_of(*text))
    if (l.rfind(group, 0) == 0) out.push_back(l.substr(group.size()));
  return out;
}

std::set<std::string> uprobe_events_of(pid_t tool) {
  std::set<std::string> names;
  for (const auto& l : uprobes_of(tool)) names.insert(l.substr(0, l.find(' ')));
  return names;
}

HostileRun run_against_hostile(std::vector<std::string> argv, const std::string& ready) {
  HostileRun h;
  Workload w("hostile");
  h.pid = w.pid();
  for (auto& a : argv)
    if (a == "PID") a = w.pid_str();
  Running tool(argv);
  if (!tool.wait_for_stdout(ready, 60)) ADD_FAILURE() << "no " << ready;
  kill(w.pid(), SIGUSR1);
  h.done = w.wait_line("done", 60);
  const std::string live = "Ctrl-C to end.\n";
  if (ready.size() >= live.size() && ready.compare(ready.size() - live.size(), live.size(), live) == 0)
    tool.signal(SIGINT);
  h.r = tool.finish(60);
  return h;
}

std::string terminal_controls(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    const bool c1 = b == 0xc2 && i + 1 < text.size() &&
                    (static_cast<unsigned char>(text[i + 1]) & 0xe0) == 0x80;
    if ((b < 0x20 && b != '\n') || b == 0x7f || c1) {
      const size_t from = i > 60 ? i - 60 : 0;
      return "control byte " + std::to_string(b) + " (decimal) at " + std::to_string(i) +
             ": " + text.substr(from, 120);
    }
  }
  return "";
}

}  // namespace tracekit::testing
