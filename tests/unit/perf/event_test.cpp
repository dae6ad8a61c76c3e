#include "perf/event.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

#include "perf/ring.hpp"
#include "perf/sample.hpp"
#include "util/strings.hpp"

// The linker defines these for a section named like a C identifier: they
// bound the code of perf_test_burn exactly, so no symbol table is needed to
// tell whether a sampled address is inside it.
extern "C" const char __start_tk_perf_burn[];
extern "C" const char __stop_tk_perf_burn[];

namespace tracekit::perf {
namespace {

// Pure user-mode work in its own section. noipa: no inlining and no clones
// (a clone could land outside the section).
__attribute__((noipa, section("tk_perf_burn"))) uint64_t perf_test_burn(uint64_t n) {
  uint64_t x = 0x9e3779b97f4a7c15;
  for (uint64_t i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
  }
  return x;
}

bool in_burn(uint64_t addr) {
  return addr >= reinterpret_cast<uintptr_t>(__start_tk_perf_burn) &&
         addr < reinterpret_cast<uintptr_t>(__stop_tk_perf_burn);
}

double now_ms(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

perf_event_attr cpu_clock_attr(uint64_t sample_type) {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_SOFTWARE;
  attr.config = PERF_COUNT_SW_CPU_CLOCK;
  attr.freq = 1;
  attr.sample_freq = 4000;
  attr.sample_type = sample_type;
  attr.disabled = 1;
  return attr;
}

// --- no root needed ---

struct HintCase {
  int err;
  const char* contains;  // "" = no hint
};

class PerfOpenHintTest : public ::testing::TestWithParam<HintCase> {};

TEST_P(PerfOpenHintTest, GuessesTheCause) {
  const auto& c = GetParam();
  std::string hint = detail::open_error_hint(c.err);
  if (std::string(c.contains).empty()) {
    EXPECT_EQ(hint, "");
  } else {
    EXPECT_NE(hint.find(c.contains), std::string::npos) << hint;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Errnos, PerfOpenHintTest,
    ::testing::Values(HintCase{EACCES, "run as root or lower /proc/sys/kernel/perf_event_paranoid"},
                      HintCase{EPERM, "run as root or lower /proc/sys/kernel/perf_event_paranoid"},
                      HintCase{ENOENT, "not supported by this kernel"},
                      HintCase{EOPNOTSUPP, "not supported by this kernel"},
                      HintCase{ENODEV, "not supported by this kernel"},
                      HintCase{EOVERFLOW, "/proc/sys/kernel/perf_event_max_stack"},
                      HintCase{ESRCH, "no such process"}, HintCase{EMFILE, "ulimit -n"},
                      HintCase{EBUSY, ""}));

TEST(PerfOpenHintLimitTest, OverflowHintNamesTheLimit) {
  EXPECT_NE(detail::open_error_hint(EOVERFLOW).find("(" + std::to_string(max_stack()) + ")"),
            std::string::npos);
}

// Issue 8, row 15: a non-root user refused by perf hears which setting
// refused them, with its value.
TEST(PerfOpenHintLimitTest, PermissionHintNamesTheParanoidSetting) {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  std::string value;
  if (!(f >> value)) GTEST_SKIP() << "/proc/sys/kernel/perf_event_paranoid is unreadable";
  for (int err : {EACCES, EPERM})
    EXPECT_EQ(detail::open_error_hint(err),
              "run as root or lower /proc/sys/kernel/perf_event_paranoid, now " + value);
}

// Issue 8, row 13: -c/-C with a CPU this machine does not have.
TEST(PerfCpuOnlineTest, NamesTheOnlineCpus) {
  struct Case {
    int cpu;
    const char* online;
    const char* message;  // "" = online
    const char* hint;
  };
  const Case cases[] = {
      {0, "0-1\n", "", ""},
      {1, "0-1\n", "", ""},
      {5, "0-1\n", "CPU 5 is not online", "online CPUs: 0-1"},
      {2, "0-1\n", "CPU 2 is not online", "online CPUs: 0-1"},
      {1, "0,2-3\n", "CPU 1 is not online", "online CPUs: 0,2-3"},
      {3, "0,2-3\n", "", ""},
      {4096, "0-63", "CPU 4096 is not online", "online CPUs: 0-63"},
      {0, "junk", "malformed CPU list", ""},
      {0, "", "malformed CPU list", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.cpu) + " in " + c.online);
    auto r = check_cpu_online(c.cpu, c.online);
    if (std::string(c.message).empty()) {
      EXPECT_TRUE(r.ok()) << r.error().str();
      continue;
    }
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().message, c.message);
    EXPECT_EQ(r.error().hint, c.hint);
  }
  // This machine: CPU 0 is online wherever these tests run; the CPU past the
  // last online one is not.
  auto online = online_cpus();
  ASSERT_TRUE(online.ok());
  EXPECT_TRUE(check_cpu_online(online->front()).ok());
  EXPECT_FALSE(check_cpu_online(online->back() + 1).ok());
}

TEST(PerfFdTest, ClosesOnDestructionAndMoveAssignment) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  {
    Fd a(p[0]);
    Fd b(std::move(a));
    EXPECT_FALSE(a.valid());  // NOLINT(bugprone-use-after-move): defined state
    EXPECT_EQ(b.get(), p[0]);
    Fd c(p[1]);
    c = std::move(b);  // closes p[1]
    EXPECT_EQ(fcntl(p[1], F_GETFD), -1);
    EXPECT_EQ(errno, EBADF);
    EXPECT_EQ(c.get(), p[0]);
    EXPECT_NE(fcntl(p[0], F_GETFD), -1);
  }
  EXPECT_EQ(fcntl(p[0], F_GETFD), -1);
}

TEST(PerfFdTest, ReleaseGivesUpOwnership) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  {
    Fd a(p[0]);
    EXPECT_EQ(a.release(), p[0]);
    EXPECT_FALSE(a.valid());
  }
  EXPECT_NE(fcntl(p[0], F_GETFD), -1);
  close(p[0]);
  close(p[1]);
}

TEST(PerfSystemTest, OnlineCpusMatchSysconf) {
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok()) << cpus.error().str();
  EXPECT_EQ(static_cast<long>(cpus->size()), sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_TRUE(std::is_sorted(cpus->begin(), cpus->end()));
}

TEST(PerfSystemTest, MaxStackMatchesProc) {
  auto text = read_file("/proc/sys/kernel/perf_event_max_stack");
  if (!text) GTEST_SKIP() << "no /proc/sys/kernel/perf_event_max_stack";
  EXPECT_EQ(max_stack(), parse_int<int>(trim(*text)).value_or(-1));
}

// The kernel's errors, without root: events on ourselves, user side only,
// which perf_event_paranoid <= 2 allows.
perf_event_attr user_only_attr() {
  perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IP);
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return attr;
}

bool denied(const Error& e) { return e.err == EACCES || e.err == EPERM; }

TEST(PerfOpenEventTest, UnknownPmuIsNotSupported) {
  perf_event_attr attr = user_only_attr();
  attr.type = 0x7ffffff0;
  auto fd = open_event(attr, 0, -1);
  ASSERT_FALSE(fd.ok());
  if (denied(fd.error())) GTEST_SKIP() << "perf_event_open denied: " << fd.error().str();
  EXPECT_EQ(fd.error().err, ENOENT) << fd.error().str();
  EXPECT_NE(fd.error().hint.find("not supported"), std::string::npos);
  EXPECT_NE(fd.error().path.find("pid 0 cpu -1"), std::string::npos) << fd.error().path;
  EXPECT_NE(fd.error().str().find("cannot open perf event"), std::string::npos);
}

TEST(PerfOpenEventTest, ExitedProcessIsNoSuchProcess) {
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  auto fd = open_event(user_only_attr(), child, -1);
  ASSERT_FALSE(fd.ok());
  if (denied(fd.error())) GTEST_SKIP() << "perf_event_open denied: " << fd.error().str();
  EXPECT_EQ(fd.error().err, ESRCH) << fd.error().str();
  EXPECT_EQ(fd.error().hint, "no such process");
}

TEST(PerfOpenEventTest, OwnThreadUserOnlyOpens) {
  auto fd = open_event(user_only_attr(), 0, -1);
  if (!fd && denied(fd.error())) GTEST_SKIP() << "perf_event_open denied: " << fd.error().str();
  ASSERT_TRUE(fd.ok()) << fd.error().str();
  EXPECT_TRUE(fd->valid());
  EXPECT_EQ(fcntl(fd->get(), F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
}

// --- root ---

TEST(PerfOpenEventRootTest, StackAboveLimitIsOverflow) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (kernel callchains)";
  perf_event_attr attr = cpu_clock_attr(PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN);
  attr.sample_max_stack = static_cast<uint16_t>(max_stack() + 1);
  auto fd = open_event(attr, 0, -1);
  ASSERT_FALSE(fd.ok());
  EXPECT_EQ(fd.error().err, EOVERFLOW) << fd.error().str();
  EXPECT_NE(fd.error().hint.find("perf_event_max_stack"), std::string::npos);
  // At the limit it opens.
  attr.sample_max_stack = static_cast<uint16_t>(max_stack());
  auto ok = open_event(attr, 0, -1);
  EXPECT_TRUE(ok.ok()) << ok.error().str();
}

TEST(PerfOpenEventRootTest, CpuClockSamplesCarryUserCallchain) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (perf_event_open with kernel callchains)";
  const uint64_t type =
      PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
  perf_event_attr attr = cpu_clock_attr(type);
  attr.sample_max_stack = static_cast<uint16_t>(max_stack());
  auto fd = open_event(attr, 0, -1);
  ASSERT_TRUE(fd.ok()) << fd.error().str();
  auto ring = Ring::map(fd->get(), 64);
  ASSERT_TRUE(ring.ok()) << ring.error().str();

  size_t samples = 0, bad = 0, burning = 0, leaf_is_ip = 0, user_only = 0, deepest = 0;
  uint64_t last_time = 0;
  bool time_ordered = true;
  auto consume = [&](const perf_event_header& h, std::span<const uint8_t> rec) {
    if (h.type != PERF_RECORD_SAMPLE) return;
    Sample s;
    if (!decode_sample(type, rec, s)) {
      ++bad;
      return;
    }
    ++samples;
    EXPECT_EQ(s.pid, static_cast<uint32_t>(getpid()));
    EXPECT_EQ(s.tid, static_cast<uint32_t>(gettid()));
    EXPECT_LT(s.cpu, static_cast<uint32_t>(sysconf(_SC_NPROCESSORS_CONF)));
    if (s.time < last_time) time_ordered = false;
    last_time = s.time;
    Chains c = split_callchain(s.callchain);
    deepest = std::max(deepest, c.user.size());
    if (c.kernel.empty() && !c.user.empty()) {
      ++user_only;
      if (c.user[0] == s.ip) ++leaf_is_ip;
    }
    if (std::any_of(c.user.begin(), c.user.end(), in_burn)) ++burning;
  };

  ASSERT_EQ(ioctl(fd->get(), PERF_EVENT_IOC_ENABLE, 0), 0);
  // 200 ms of this thread's CPU time, however busy the machine is, so the
  // sample count is predictable; the wall-clock cap only stops a hang.
  volatile uint64_t sink = 0;
  const double cpu_start = now_ms(CLOCK_THREAD_CPUTIME_ID), wall_start = now_ms();
  double last_drain = wall_start;
  while (now_ms(CLOCK_THREAD_CPUTIME_ID) - cpu_start < 200 && now_ms() - wall_start < 5000) {
    sink = sink + perf_test_burn(200000);
    if (now_ms() - last_drain > 20) {
      ring->drain(consume);
      last_drain = now_ms();
    }
  }
  ASSERT_EQ(ioctl(fd->get(), PERF_EVENT_IOC_DISABLE, 0), 0);
  ring->drain(consume);

  std::printf(
      "cpu-clock 4000 Hz, 200 ms cpu: %zu samples, %zu in burn, %zu user-only, deepest user "
      "chain %zu, lost %llu\n",
      samples, burning, user_only, deepest, static_cast<unsigned long long>(ring->lost()));
  EXPECT_EQ(bad, 0u);
  EXPECT_TRUE(time_ordered);
  EXPECT_EQ(ring->lost(), 0u);
  // 800 expected; allow for the frequency ramping up and a busy VM.
  EXPECT_GE(samples, 200u);
  // Nearly all time is spent in perf_test_burn.
  EXPECT_GE(burning * 10, samples * 7);
  // A sample taken in user mode has the sampled IP as its first user frame.
  EXPECT_GT(user_only, 0u);
  EXPECT_EQ(leaf_is_ip, user_only);
  EXPECT_GE(deepest, 2u);  // burn and its caller, through frame pointers
}

}  // namespace
}  // namespace tracekit::perf
