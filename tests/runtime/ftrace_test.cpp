// The raw ftrace reader on this kernel: a private instance with
// syscalls:sys_enter_getppid (filtered to a workload's pid, with a stacktrace
// trigger) while tests/workloads/getppid_n makes exactly N getppid calls;
// streaming (poll while tracing) and buffered (flush afterwards) must both
// hand out exactly N events, each with a kernel stack through the syscall
// entry; a flood into a tiny buffer must count what it refused.
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "ftrace/reader.hpp"
#include "harness.hpp"
#include "symbols/kallsyms.hpp"

namespace tracekit::testing {
namespace {

const std::string kTracing = "/sys/kernel/tracing";
constexpr const char* kEvent = "events/syscalls/sys_enter_getppid";

// Writes text to a tracefs file; "" on success, else the errno text.
std::string write_file(const std::string& path, const std::string& text, bool append = false) {
  std::ofstream f(path, append ? std::ios::app : std::ios::trunc);
  f << text;
  f.flush();
  return f ? "" : path + ": " + std::strerror(errno);
}

// A private tracefs instance, torn down on destruction whatever happened:
// events disabled, the trigger removed ("!" + trigger: truncating the file
// does not remove one), the filter cleared, the directory removed.
class TestInstance {
 public:
  TestInstance() {
    static int seq = 0;
    name_ = "tracekit_test_" + std::to_string(getpid()) + "_" + std::to_string(seq++);
    dir_ = kTracing + "/instances/" + name_;
    if (mkdir(dir_.c_str(), 0755) != 0) {
      error_ = dir_ + ": " + std::strerror(errno);
      return;
    }
    // A reader wants refused events counted, not old ones overwritten.
    set("options/overwrite", "0");
  }
  ~TestInstance() {
    if (!error_.empty() && access(dir_.c_str(), F_OK) != 0) return;
    write_file(dir_ + "/" + kEvent + "/enable", "0");
    if (!trigger_.empty()) write_file(dir_ + "/" + kEvent + "/trigger", "!" + trigger_, true);
    write_file(dir_ + "/" + kEvent + "/filter", "0");
    rmdir(dir_.c_str());
  }
  TestInstance(const TestInstance&) = delete;
  TestInstance& operator=(const TestInstance&) = delete;

  void set(const std::string& file, const std::string& text) {
    std::string e = write_file(dir_ + "/" + file, text);
    if (!e.empty() && error_.empty()) error_ = e;
  }
  // sys_enter_getppid of pid only, with its kernel stack when stacks.
  void trace_getppid(pid_t pid, bool stacks) {
    std::string pred = "common_pid == " + std::to_string(pid);
    set(std::string(kEvent) + "/filter", pred);
    if (stacks) {
      // The filter does not gate triggers: the trigger carries the predicate.
      trigger_ = "stacktrace if " + pred;
      std::string e = write_file(dir_ + "/" + kEvent + "/trigger", trigger_, true);
      if (!e.empty() && error_.empty()) error_ = e;
    }
    set(std::string(kEvent) + "/enable", "1");
  }
  void stop() { set(std::string(kEvent) + "/enable", "0"); }

  const std::string& name() const { return name_; }
  const std::string& error() const { return error_; }

 private:
  std::string name_, dir_, trigger_, error_;
};

// What the callback saw, checked after the fact (the callback may run on
// another thread).
struct Tally {
  int want_type = -1;
  pid_t pid = 0;
  const symbols::KernelSymbols* syms = nullptr;
  std::atomic<uint64_t> events{0}, with_stack{0}, through_entry{0}, foreign{0};
  std::string first_stack;

  void operator()(const ftrace::Event& e) {
    if (e.type != want_type || e.pid != pid) {
      ++foreign;
      return;
    }
    ++events;
    if (!e.has_stack) return;
    ++with_stack;
    bool syscall64 = false, entry = false;
    std::string names;
    for (uint64_t a : e.stack) {
      auto r = syms->lookup(a, true);
      std::string_view n = r ? r->name : "?";
      names += std::string(n) + ";";
      syscall64 |= n == "do_syscall_64";
      entry |= n.substr(0, 17) == "entry_SYSCALL_64_";
    }
    if (first_stack.empty()) first_stack = names;
    if (syscall64 && entry) ++through_entry;
  }
};

class FtraceReaderRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: tracefs instances";
    if (access((kTracing + "/instances").c_str(), F_OK) != 0)
      GTEST_SKIP() << "tracefs not mounted at " << kTracing;
    auto s = symbols::KernelSymbols::load();
    ASSERT_TRUE(s.ok()) << s.error().str();
    syms_ = std::move(*s);
  }

  // Starts workload getppid_n (with args) parked, a private instance tracing
  // its getppid calls (with stacks when stacks; a buffer of buffer_kb when
  // given) and a reader on it, and points the tally at them. Check with
  // ASSERT_NO_FATAL_FAILURE.
  void start(const std::vector<std::string>& args, bool stacks, const char* buffer_kb = nullptr) {
    w_.emplace("getppid_n", args);
    inst_.emplace();
    if (buffer_kb != nullptr) inst_->set("buffer_size_kb", buffer_kb);
    inst_->trace_getppid(w_->pid(), stacks);
    ASSERT_EQ(inst_->error(), "");
    auto r = ftrace::Reader::open(kTracing, inst_->name(), {"syscalls"}, ftrace::StackKinds{stacks});
    ASSERT_TRUE(r.ok()) << r.error().str();
    r_.emplace(std::move(*r));
    t_.want_type = r_->event_id("syscalls", "sys_enter_getppid");
    t_.pid = w_->pid();
    t_.syms = &syms_;
  }
  // A private instance tracing this thread's getppid calls (no stacks) and a
  // reader on it, for tests that move the thread between CPUs 0 and 1;
  // before: the thread's affinity, to restore. Skips unless both CPUs are
  // usable. Check with ASSERT_NO_FATAL_FAILURE, then IsSkipped().
  void trace_this_thread(cpu_set_t& before) {
    ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
    if (CPU_COUNT(&before) < 2 || !CPU_ISSET(0, &before) || !CPU_ISSET(1, &before))
      GTEST_SKIP() << "needs CPUs 0 and 1 (this one has " << CPU_COUNT(&before) << " usable)";
    inst_.emplace();
    inst_->trace_getppid(static_cast<pid_t>(syscall(SYS_gettid)), false);
    ASSERT_EQ(inst_->error(), "");
    auto r = ftrace::Reader::open(kTracing, inst_->name(), {"syscalls"}, ftrace::StackKinds{});
    ASSERT_TRUE(r.ok()) << r.error().str();
    r_.emplace(std::move(*r));
  }
  // Runs the workload to its end (timeout_s) and stops tracing.
  void run_to_end(double timeout_s) {
    w_->go();
    ASSERT_TRUE(w_->wait_line("done", timeout_s));
    inst_->stop();
  }
  // Hands out whatever the buffer holds to the tally.
  uint64_t flush() {
    return r_->flush([&](const ftrace::Event& e) { t_(e); });
  }

  symbols::KernelSymbols syms_;
  // Torn down in reverse: the reader, then the instance, then the workload.
  std::optional<Workload> w_;
  std::optional<TestInstance> inst_;
  Tally t_;
  std::optional<ftrace::Reader> r_;
};

constexpr uint64_t kCalls = 1009;  // getppid_n's default

TEST_F(FtraceReaderRuntime, StreamingHandsOutExactlyNEventsWithEntryStacks) {
  ASSERT_NO_FATAL_FAILURE(start({}, true));
  ASSERT_GT(t_.want_type, 0);
  Tally& t = t_;
  auto& r = r_;

  // Stream on a thread while this one drives the workload, as a tool would.
  std::atomic<bool> stop{false};
  uint64_t polled = 0;
  std::thread reader([&] {
    auto fn = [&](const ftrace::Event& e) { t(e); };
    while (!stop) polled += r->poll(50, fn);
  });
  w_->go();
  bool done = w_->wait_line("done", 30);
  // Until every event arrived through poll(), or 10 s.
  for (int i = 0; i < 200 && t.events < kCalls; ++i) usleep(50'000);
  stop = true;
  reader.join();
  ASSERT_TRUE(done) << "workload did not finish";
  EXPECT_EQ(t.events.load(), kCalls) << "through poll() alone";
  inst_->stop();
  uint64_t flushed = flush();
  EXPECT_EQ(flushed, 0u);
  EXPECT_EQ(t.events.load(), kCalls);
  EXPECT_EQ(polled, kCalls);
  EXPECT_EQ(t.with_stack.load(), kCalls);
  EXPECT_EQ(t.through_entry.load(), kCalls) << "a stack: " << t.first_stack;
  EXPECT_EQ(t.foreign.load(), 0u);
  EXPECT_EQ(r->dropped(), 0u);
  EXPECT_EQ(r->unpaired(), 0u);
}

TEST_F(FtraceReaderRuntime, BufferedModeFlushHandsOutExactlyNEvents) {
  ASSERT_NO_FATAL_FAILURE(start({}, true));
  ASSERT_NO_FATAL_FAILURE(run_to_end(30));
  const Tally& t = t_;
  auto& r = r_;
  uint64_t n = flush();
  EXPECT_EQ(n, kCalls);
  EXPECT_EQ(t.events.load(), kCalls);
  EXPECT_EQ(t.with_stack.load(), kCalls);
  EXPECT_EQ(t.through_entry.load(), kCalls) << "a stack: " << t.first_stack;
  EXPECT_EQ(r->dropped(), 0u);
  EXPECT_EQ(r->unpaired(), 0u);
  // Nothing is left: a second flush hands out nothing.
  EXPECT_EQ(flush(), 0u);
}

// Nobody reads while a tiny buffer (overwrite off) takes 200003 events: the
// buffer refuses most, and every event is either handed out or counted as
// dropped, exactly (one event enabled, no stacks: one record per call).
TEST_F(FtraceReaderRuntime, FloodIntoATinyBufferCountsEveryRefusedEvent) {
  constexpr uint64_t kFlood = 200003;
  ASSERT_NO_FATAL_FAILURE(start({std::to_string(kFlood)}, false, "8"));
  ASSERT_NO_FATAL_FAILURE(run_to_end(60));
  const Tally& t = t_;
  auto& r = r_;
  uint64_t n = flush();
  EXPECT_EQ(n, t.events.load());
  EXPECT_GT(r->dropped(), 0u);
  EXPECT_GT(t.events.load(), 0u);
  EXPECT_EQ(t.events.load() + r->dropped(), kFlood)
      << "handed out " << t.events.load() << ", dropped " << r->dropped();
  EXPECT_EQ(t.with_stack.load(), 0u);
  EXPECT_EQ(r->unpaired(), 0u);
}

// The same flood with stacks: each call writes an event and its stack, and
// either may be refused; every call is accounted for by a handed-out event
// or a drop, an event whose stack was refused comes out without one.
TEST_F(FtraceReaderRuntime, FloodWithStacksAccountsForEveryCall) {
  constexpr uint64_t kFlood = 100003;
  ASSERT_NO_FATAL_FAILURE(start({std::to_string(kFlood)}, true, "8"));
  ASSERT_NO_FATAL_FAILURE(run_to_end(60));
  const Tally& t = t_;
  auto& r = r_;
  flush();
  uint64_t dropped = r->dropped();
  EXPECT_GT(dropped, 0u);
  EXPECT_GE(t.events.load() + dropped, kFlood);
  EXPECT_LE(t.events.load() + dropped, 2 * kFlood);
  EXPECT_LE(r->unpaired(), dropped);
  EXPECT_EQ(t.through_entry.load(), t.with_stack.load()) << "a stack: " << t.first_stack;
}

TEST_F(FtraceReaderRuntime, OpenFailsForAMissingInstance) {
  auto r = ftrace::Reader::open(kTracing, "tracekit_no_such_instance", {"syscalls"}, ftrace::StackKinds{true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("instances/tracekit_no_such_instance"), std::string::npos)
      << r.error().str();
}

TEST_F(FtraceReaderRuntime, OpenFailsForAMissingEventSystem) {
  TestInstance inst;
  ASSERT_EQ(inst.error(), "");
  auto r = ftrace::Reader::open(kTracing, inst.name(), {"no_such_system"}, ftrace::StackKinds{true});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().str().find("no_such_system"), std::string::npos) << r.error().str();
}

// Time order across CPUs: this thread makes its getppid calls on CPU 0 and
// CPU 1 in turn, and a time-ordered flush hands them out by timestamp, all
// of them, none twice.
TEST_F(FtraceReaderRuntime, TimeOrderedFlushMergesTheCpus) {
  cpu_set_t before;
  ASSERT_NO_FATAL_FAILURE(trace_this_thread(before));
  if (IsSkipped()) return;
  auto& r = r_;
  r->set_time_ordered(true);
  constexpr int kSwitches = 101;
  for (int i = 0; i < kSwitches; ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(i % 2, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    syscall(SYS_getppid);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  inst_->stop();
  std::vector<uint64_t> times;
  std::vector<int> cpus;
  r->flush([&](const ftrace::Event& e) {
    times.push_back(e.ts);
    cpus.push_back(e.cpu);
  });
  ASSERT_EQ(times.size(), static_cast<size_t>(kSwitches));
  for (size_t i = 1; i < times.size(); ++i) {
    EXPECT_LE(times[i - 1], times[i]) << "event " << i;
    EXPECT_EQ(cpus[i], static_cast<int>(i % 2)) << "event " << i;
  }
}

// One thread makes kBlock getppid calls on CPU 0, then on CPU 1, and so on;
// a flush (not time-ordered) reads both rings: their pages come merged by
// time, so no event is handed out after more than a page's worth of later
// events of the other CPU (read one CPU to its end, then the next, it
// would be after half of them), and no event comes after a progress()
// that promised nothing earlier was still to come.
TEST_F(FtraceReaderRuntime, PagesOfTheCpusComeMergedByTime) {
  cpu_set_t before;
  ASSERT_NO_FATAL_FAILURE(trace_this_thread(before));
  if (IsSkipped()) return;
  auto& r = r_;
  constexpr int kBlocks = 20, kBlock = 499;
  for (int b = 0; b < kBlocks; ++b) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(b % 2, &one);
    ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
    for (int i = 0; i < kBlock; ++i) syscall(SYS_getppid);
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  inst_->stop();
  std::vector<uint64_t> handed[2];  // each CPU's timestamps, as handed out
  size_t events = 0, late_most = 0, progresses = 0;
  uint64_t promised = 0, last_progress = 0;
  r->flush(
      [&](const ftrace::Event& e) {
        ASSERT_TRUE(e.cpu == 0 || e.cpu == 1) << e.cpu;
        ++events;
        EXPECT_GE(e.ts, promised) << "event " << events << " after progress(" << promised << ")";
        const auto& other = handed[1 - e.cpu];
        late_most = std::max<size_t>(
            late_most,
            static_cast<size_t>(other.end() - std::upper_bound(other.begin(), other.end(), e.ts)));
        handed[e.cpu].push_back(e.ts);
      },
      [&](uint64_t upto) {
        ++progresses;
        if (upto != UINT64_MAX) promised = std::max(promised, upto);
        last_progress = upto;
      });
  ASSERT_EQ(events, static_cast<size_t>(kBlocks * kBlock));
  EXPECT_TRUE(std::is_sorted(handed[0].begin(), handed[0].end()));
  EXPECT_TRUE(std::is_sorted(handed[1].begin(), handed[1].end()));
  // A page holds at most 4096 / 16 of these records (each is 20 bytes or
  // more); one read one CPU after the other would make it about 5,000.
  EXPECT_LE(late_most, 256u);
  EXPECT_GE(progresses, events / 256);  // after every page read
  EXPECT_EQ(last_progress, UINT64_MAX);
}

}  // namespace
}  // namespace tracekit::testing
