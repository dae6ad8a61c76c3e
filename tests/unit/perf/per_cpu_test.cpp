// PerCpuEvents against the real kernel; everything here needs root, as
// system-wide events do.
#include "perf/per_cpu.hpp"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "perf/sample.hpp"
#include "util/strings.hpp"

namespace tracekit::perf {
namespace {

constexpr uint64_t kType = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

perf_event_attr cpu_clock(uint64_t freq) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = freq;
  attr.sample_type = kType;
  attr.disabled = 1;
  attr.wakeup_events = 1;  // wake wait() at every sample
  return attr;
}

double now_ms(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// Spins on cpu until this thread has had ms of CPU time (the machine may be
// shared, so wall time says little), or 5 s have passed. Returns its tid.
pid_t spin_on(int cpu, double ms) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof set, &set);
  volatile uint64_t x = 0;
  const double cpu_start = now_ms(CLOCK_THREAD_CPUTIME_ID), wall_start = now_ms();
  while (now_ms(CLOCK_THREAD_CPUTIME_ID) - cpu_start < ms && now_ms() - wall_start < 5000)
    x = x + 1;
  return gettid();
}

#define REQUIRE_ROOT() \
  if (geteuid() != 0) GTEST_SKIP() << "needs root (system-wide perf events)"

TEST(PerfPerCpuTest, SamplesEveryOnlineCpu) {
  REQUIRE_ROOT();
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok()) << cpus.error().str();
  auto ev = PerCpuEvents::open(cpu_clock(1000), *cpus);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  EXPECT_EQ(ev->cpus(), *cpus);
  EXPECT_FALSE(ev->hung_up());

  // Disabled at open: nothing yet.
  usleep(20000);
  EXPECT_EQ(ev->drain([](int, const perf_event_header&, std::span<const uint8_t>) {}), 0u);

  ASSERT_TRUE(ev->enable().ok());
  std::vector<pid_t> spinners(cpus->size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < cpus->size(); ++i)
    threads.emplace_back([&, i] { spinners[i] = spin_on((*cpus)[i], 150); });
  for (auto& t : threads) t.join();
  ASSERT_TRUE(ev->disable().ok());

  std::map<int, size_t> per_cpu, ours_per_cpu;
  size_t bad = 0;
  ev->drain([&](int cpu, const perf_event_header& h, std::span<const uint8_t> rec) {
    if (h.type != PERF_RECORD_SAMPLE) return;
    Sample s;
    if (!decode_sample(kType, rec, s)) {
      ++bad;
      return;
    }
    EXPECT_EQ(static_cast<int>(s.cpu), cpu) << "a ring holds only its own CPU's samples";
    ++per_cpu[cpu];
    for (size_t i = 0; i < cpus->size(); ++i)
      if ((*cpus)[i] == cpu && s.tid == static_cast<uint32_t>(spinners[i])) ++ours_per_cpu[cpu];
  });
  EXPECT_EQ(bad, 0u);
  EXPECT_EQ(ev->lost(), 0u);
  for (int cpu : *cpus) {
    // 150 ms of CPU time at 1000 Hz: about 150 samples of our spinner.
    EXPECT_GE(per_cpu[cpu], 75u) << "cpu " << cpu;
    EXPECT_GE(ours_per_cpu[cpu], 75u) << "cpu " << cpu;
  }

  // Disabled again: spinning produces nothing more.
  spin_on((*cpus)[0], 30);
  EXPECT_EQ(ev->drain([](int, const perf_event_header&, std::span<const uint8_t>) {}), 0u);
}

TEST(PerfPerCpuTest, WaitReturnsWhenDataArrives) {
  REQUIRE_ROOT();
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  auto ev = PerCpuEvents::open(cpu_clock(1000), *cpus);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  // Nothing enabled: a short wait times out (and says it was not a signal).
  double t0 = now_ms();
  EXPECT_TRUE(ev->wait(50));
  EXPECT_GE(now_ms() - t0, 45);

  ASSERT_TRUE(ev->enable().ok());
  std::thread spinner([&] { spin_on((*cpus)[0], 100); });
  t0 = now_ms();
  EXPECT_TRUE(ev->wait(5000));
  EXPECT_LT(now_ms() - t0, 1000) << "wakeup_events = 1 should wake at the first sample";
  spinner.join();
  ASSERT_TRUE(ev->disable().ok());
  EXPECT_GT(ev->drain([](int, const perf_event_header&, std::span<const uint8_t>) {}), 0u);
}

void on_usr1(int) {}

TEST(PerfPerCpuTest, WaitIsFalseWhenInterrupted) {
  REQUIRE_ROOT();
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  auto ev = PerCpuEvents::open(cpu_clock(1000), *cpus);  // left disabled: no data
  ASSERT_TRUE(ev.ok()) << ev.error().str();

  struct sigaction sa = {};
  struct sigaction old = {};
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_RESTART;  // poll(2) is never restarted anyway
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);
  pthread_t self = pthread_self();
  std::thread killer([self] {
    usleep(50000);
    pthread_kill(self, SIGUSR1);
  });
  const double t0 = now_ms();
  EXPECT_FALSE(ev->wait(5000));
  EXPECT_EQ(errno, EINTR);
  EXPECT_LT(now_ms() - t0, 2000);
  killer.join();
  sigaction(SIGUSR1, &old, nullptr);
}

TEST(PerfPerCpuTest, FilterOnNonTracepointIsRejected) {
  REQUIRE_ROOT();
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  auto ev = PerCpuEvents::open(cpu_clock(1000), *cpus);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  auto st = ev->set_filter("common_pid == 1");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().err, EINVAL) << st.error().str();
  EXPECT_NE(st.error().path.find("CPU " + std::to_string((*cpus)[0])), std::string::npos);
  EXPECT_NE(st.error().hint.find("tracepoint"), std::string::npos);
}

const std::string kTracefs = "/sys/kernel/tracing";

// A tracepoint's directory, mounting tracefs first if nobody has (as tools
// do). Empty when there is no such tracepoint.
std::string tracepoint_dir(const std::string& sys_event) {
  struct stat st;
  if (stat((kTracefs + "/events").c_str(), &st) != 0)
    mount("nodev", kTracefs.c_str(), "tracefs", 0, nullptr);
  std::string dir = kTracefs + "/events/" + sys_event;
  return stat((dir + "/id").c_str(), &st) == 0 ? dir : "";
}

// The offset of "field:<decl>;" in a format file.
std::optional<size_t> field_offset(const std::string& format, const std::string& decl) {
  auto at = format.find("field:" + decl + ";");
  if (at == std::string::npos) return std::nullopt;
  auto off = format.find("offset:", at);
  auto end = format.find(';', off);
  if (off == std::string::npos || end == std::string::npos) return std::nullopt;
  return parse_int<size_t>(format.substr(off + 7, end - off - 7));
}

TEST(PerfPerCpuTest, TracepointFilterKeepsOnlyMatchingEvents) {
  REQUIRE_ROOT();
  const std::string dir = tracepoint_dir("sched/sched_switch");
  if (dir.empty()) GTEST_SKIP() << "no sched/sched_switch tracepoint (tracefs not mountable?)";
  auto id_text = read_file(dir + "/id");
  auto format = read_file(dir + "/format");
  ASSERT_TRUE(id_text.ok() && format.ok());
  auto id = parse_int<uint64_t>(trim(*id_text));
  auto prev_pid_at = field_offset(*format, "pid_t prev_pid");
  ASSERT_TRUE(id && prev_pid_at);
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  perf_event_attr attr{};
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = *id;
  attr.sample_period = 1;
  attr.sample_type = kType | PERF_SAMPLE_RAW;
  attr.disabled = 1;
  auto ev = PerCpuEvents::open(attr, *cpus);
  ASSERT_TRUE(ev.ok()) << ev.error().str();

  // A thread that switches out a known number of times.
  std::atomic<pid_t> tid{0};
  std::atomic<bool> go{false};
  std::thread sleeper([&] {
    tid = gettid();
    while (!go) usleep(1000);
    for (int i = 0; i < 17; ++i) usleep(2000);
  });
  while (tid == 0) usleep(1000);

  auto bad = ev->set_filter("no_such_field == 1");
  EXPECT_FALSE(bad.ok());
  ASSERT_TRUE(ev->set_filter("prev_pid == " + std::to_string(tid.load())).ok());
  ASSERT_TRUE(ev->enable().ok());
  go = true;
  sleeper.join();
  ASSERT_TRUE(ev->disable().ok());

  const auto want = static_cast<uint32_t>(tid.load());
  size_t n = 0, exit_switches = 0;
  ev->drain([&](int, const perf_event_header& h, std::span<const uint8_t> rec) {
    Sample s;
    if (h.type != PERF_RECORD_SAMPLE) return;
    ASSERT_TRUE(decode_sample(attr.sample_type, rec, s));
    ++n;
    ASSERT_GE(s.raw.size(), *prev_pid_at + 4);
    int32_t prev_pid;
    std::memcpy(&prev_pid, s.raw.data() + *prev_pid_at, sizeof prev_pid);
    EXPECT_EQ(static_cast<uint32_t>(prev_pid), want);
    // The sample is the outgoing task's, except for the last switch of a
    // thread that exited: its pid is already unhashed and the kernel says -1.
    if (s.tid == static_cast<uint32_t>(-1)) {
      ++exit_switches;
      EXPECT_EQ(s.pid, static_cast<uint32_t>(getpid()));
    } else {
      EXPECT_EQ(s.tid, want);
    }
  });
  EXPECT_LE(exit_switches, 1u);
  // 17 sleeps, the 1 ms polls before go, and the exit; at least the sleeps.
  EXPECT_GE(n, 17u);
}

TEST(PerfPerCpuTest, HangsUpWhenTheTracedProcessExits) {
  REQUIRE_ROOT();
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    char c;
    (void)!read(go[0], &c, 1);
    volatile uint64_t x = 0;
    for (int i = 0; i < 20000000; ++i) x = x + 1;
    _exit(0);
  }
  auto ev = PerCpuEvents::open(cpu_clock(1000), *cpus, child);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  ASSERT_TRUE(ev->enable().ok());
  ASSERT_EQ(write(go[1], "x", 1), 1);
  waitpid(child, nullptr, 0);
  // Each wait() must return; once every event hung up the loop ends.
  int rounds = 0;
  const double t0 = now_ms();
  while (!ev->hung_up() && now_ms() - t0 < 3000) {
    ASSERT_TRUE(ev->wait(100));
    ev->drain([](int, const perf_event_header&, std::span<const uint8_t>) {});
    ++rounds;
  }
  EXPECT_TRUE(ev->hung_up());
  EXPECT_LT(rounds, 10);
  EXPECT_TRUE(ev->wait(-1)) << "must not block once everything hung up";
  close(go[0]);
  close(go[1]);
}

}  // namespace
}  // namespace tracekit::perf
