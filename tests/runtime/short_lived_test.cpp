// A process that starts, burns CPU and exits before a tool drains its rings:
// by the time its samples are read /proc/PID is gone, so its user frames
// resolve only through the MMAP2 records ProcessEvents feeds to UserSymbols.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "harness.hpp"
#include "perf/per_cpu.hpp"
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "symbols/user.hpp"

namespace tracekit::testing {
namespace {

constexpr uint64_t kSampleType =
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN;
constexpr int kHertz = 2000;
constexpr const char* kBurnMs = "30";  // ~60 samples at kHertz

// What one run left in the rings, read only after the workload was reaped.
struct Recording {
  perf_event_attr attr{};
  pid_t pid = -1;
  bool misordered = false;                    // the FORK was pinned to be read after the exec
  std::vector<std::vector<uint8_t>> records;  // copies: ring spans die with the drain
  std::string error;
};

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

// The parent forks on the last CPU and the child execs on the first, so the
// rings, read in CPU order, hand over the child's exec and MMAP2s before
// the FORK that precedes them: the order ProcessEvents must undo.
Recording record_shortlived() {
  Recording r;
  r.attr.type = PERF_TYPE_SOFTWARE;
  r.attr.config = PERF_COUNT_SW_CPU_CLOCK;
  r.attr.freq = 1;
  r.attr.sample_freq = kHertz;
  r.attr.sample_type = kSampleType;
  r.attr.disabled = 1;
  r.attr.sample_max_stack = 32;
  perf::request_process_events(r.attr);
  auto cpus = perf::online_cpus();
  if (!cpus) return r.error = "online_cpus failed", r;
  auto events = perf::PerCpuEvents::open(r.attr, *cpus, -1, 512);
  if (!events) return r.error = "perf_event_open failed: " + events.error().str(), r;
  if (!events->enable()) return r.error = "enable failed", r;

  std::string path = workload_path("shortlived");
  cpu_set_t old;
  sched_getaffinity(0, sizeof old, &old);
  r.misordered = cpus->size() >= 2 && pin(cpus->back());
  r.pid = fork();
  if (r.pid == 0) {
    if (r.misordered && !pin(cpus->front())) _exit(126);
    execl(path.c_str(), "shortlived", kBurnMs, static_cast<char*>(nullptr));
    _exit(127);
  }
  sched_setaffinity(0, sizeof old, &old);
  int status = 0;
  waitpid(r.pid, &status, 0);
  (void)events->disable();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return r.error = "workload failed: " + path + " status " + std::to_string(status), r;
  events->drain([&](int, const perf_event_header&, std::span<const uint8_t> rec) {
    r.records.emplace_back(rec.begin(), rec.end());
  });
  if (events->lost() != 0) r.error = std::to_string(events->lost()) + " records lost";
  return r;
}

perf_event_header header_of(const std::vector<uint8_t>& rec) {
  perf_event_header h;
  std::memcpy(&h, rec.data(), sizeof h);
  return h;
}

// What the workload's post-exec samples resolved to.
struct Resolution {
  int samples = 0;     // with a user stack, taken after the exec
  int burn = 0;        // leaf in shortlived_burn
  int main_below = 0;  // ... called from main
  int resolved = 0;    // leaf resolved to anything
  std::string burn_module;
  std::string comm;
  bool fork_after_exec = false;  // in the order records were read
  perf::ProcessEvents::Stats stats;
};

// Feeds the recording as a tool does: side-band records to ProcessEvents
// (all of them, or all but the MMAP/MMAP2 ones), samples noted as they come
// (note_process, which fails: the process is gone), lookups at the end.
// attr: what ProcessEvents is told about the records.
Resolution resolve(const Recording& r, bool with_mmaps, const perf_event_attr& attr) {
  perf::TaskNames names;
  symbols::UserSymbols syms;
  perf::ProcessEvents process(names, syms, attr);
  Resolution out;
  std::optional<uint64_t> exec_time;
  struct Taken {
    uint64_t time;
    std::vector<uint64_t> user;
  };
  std::vector<Taken> taken;
  for (const auto& rec : r.records) {
    perf_event_header h = header_of(rec);
    if (h.type == PERF_RECORD_SAMPLE) {
      perf::Sample s;
      if (!perf::decode_sample(r.attr.sample_type, rec, s) || s.pid != static_cast<uint32_t>(r.pid))
        continue;
      auto user = perf::split_callchain(s.callchain).user;
      if (user.empty()) continue;
      EXPECT_FALSE(syms.note_process(r.pid));
      taken.push_back({s.time, {user.begin(), user.end()}});
      continue;
    }
    perf::Comm c;
    perf::SampleId id;
    if (perf::decode_comm(rec, c) && c.exec && c.pid == static_cast<uint32_t>(r.pid) &&
        perf::decode_sample_id(r.attr.sample_type, rec, id))
      exec_time = id.time;
    perf::Task task;
    if (h.type == PERF_RECORD_FORK && perf::decode_task(rec, task) &&
        task.pid == static_cast<uint32_t>(r.pid) && task.tid == task.pid)
      out.fork_after_exec = exec_time.has_value();
    if (!with_mmaps && (h.type == PERF_RECORD_MMAP || h.type == PERF_RECORD_MMAP2)) continue;
    process.handle(h, rec);
  }
  EXPECT_TRUE(exec_time.has_value()) << "no COMM exec record for " << r.pid;
  out.stats = process.stats();
  out.comm = names.settle(names.comm(r.pid, r.pid, 0));
  for (const Taken& t : taken) {
    // Before the exec the child ran the test's own image (fork).
    if (!exec_time || t.time < *exec_time) continue;
    ++out.samples;
    auto leaf = syms.lookup(r.pid, t.user[0]);
    if (!leaf) continue;
    ++out.resolved;
    if (leaf->name != "shortlived_burn") continue;
    ++out.burn;
    out.burn_module = std::string(leaf->module);
    if (t.user.size() > 1) {
      auto caller = syms.lookup(r.pid, t.user[1], true);
      if (caller && caller->name == "main") ++out.main_below;
    }
  }
  return out;
}

class ShortLivedRuntime : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    recording_ = new Recording(record_shortlived());
  }
  static void TearDownTestSuite() {
    delete recording_;
    recording_ = nullptr;
  }
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on all CPUs";
    ASSERT_NE(recording_, nullptr);
    ASSERT_TRUE(recording_->error.empty()) << recording_->error;
    struct stat st;
    ASSERT_NE(stat(("/proc/" + std::to_string(recording_->pid)).c_str(), &st), 0)
        << "the workload should be gone";
  }
  static Recording* recording_;
};

Recording* ShortLivedRuntime::recording_ = nullptr;

TEST_F(ShortLivedRuntime, UserFramesResolveThroughMmap2Records) {
  Resolution r = resolve(*recording_, true, recording_->attr);
  // 30 ms at 2000 Hz: ~60 samples; the first ~1 ms is the dynamic loader's.
  ASSERT_GE(r.samples, 20) << "too few samples of the workload";
  EXPECT_GE(r.burn, r.samples * 8 / 10) << r.burn << " of " << r.samples << " in shortlived_burn";
  EXPECT_GE(r.main_below, r.burn * 8 / 10) << r.main_below << " of " << r.burn << " under main";
  EXPECT_TRUE(r.burn_module.ends_with("/shortlived")) << r.burn_module;
  EXPECT_EQ(r.comm, "shortlived");
  if (recording_->misordered) {
    EXPECT_TRUE(r.fork_after_exec) << "the FORK should have been read last";
    EXPECT_GE(r.stats.stale, 1u);
  }
}

// Applied in the order the rings hand them over, the late FORK would forget
// the new image: why ProcessEvents reads the records' times.
TEST_F(ShortLivedRuntime, ArrivalOrderLosesTheImageWhenTheForkIsReadLate) {
  if (!recording_->misordered) GTEST_SKIP() << "needs two CPUs";
  perf_event_attr untimed = recording_->attr;
  untimed.sample_id_all = 0;  // the records still have their trailers: ignored
  Resolution r = resolve(*recording_, true, untimed);
  ASSERT_TRUE(r.fork_after_exec);
  ASSERT_GE(r.samples, 20) << "too few samples of the workload";
  EXPECT_EQ(r.resolved, 0);
  // The late FORK also undid the exec's name (the parent's name, unknown
  // here, would have been copied; an unknown one is what settle() makes
  // of the placeholder: "[unknown]" when the parent is never named).
  EXPECT_EQ(r.comm, "[unknown]");
}

// The problem solved above: without the MMAP2 records nothing of the
// process resolves, since it is gone before its samples are read.
TEST_F(ShortLivedRuntime, WithoutMmap2RecordsNothingResolves) {
  Resolution r = resolve(*recording_, false, recording_->attr);
  ASSERT_GE(r.samples, 20) << "too few samples of the workload";
  EXPECT_EQ(r.resolved, 0);
  EXPECT_EQ(r.comm, "shortlived");  // names come from COMM, not from /proc
}

}  // namespace
}  // namespace tracekit::testing
