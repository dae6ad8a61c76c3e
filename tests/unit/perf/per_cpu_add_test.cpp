// PerCpuEvents::add: several tracepoint events writing into one ring per CPU.
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perf/per_cpu.hpp"
#include "perf/sample.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::perf {
namespace {

std::optional<uint64_t> tracepoint_id(const std::string& event) {
  auto dir = tracefs::tracing_dir();
  if (!dir) return std::nullopt;
  auto text = read_file(*dir + "/events/syscalls/" + event + "/id");
  if (!text) return std::nullopt;
  return parse_int<uint64_t>(trim(*text));
}

perf_event_attr attr_for(uint64_t id) {
  perf_event_attr a{};
  a.type = PERF_TYPE_TRACEPOINT;
  a.config = id;
  a.sample_period = 1;
  a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ID;
  a.disabled = 1;
  return a;
}

TEST(PerfPerCpuAddTest, TwoEventsShareEachCpusRing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: system-wide tracepoint events";
  auto ppid = tracepoint_id("sys_enter_getppid");
  auto pid = tracepoint_id("sys_enter_getpid");
  if (!ppid || !pid) GTEST_SKIP() << "no syscalls tracepoints in this kernel";
  auto cpus = online_cpus();
  ASSERT_TRUE(cpus.ok());
  auto ev = PerCpuEvents::open(attr_for(*ppid), *cpus, -1, 16);
  ASSERT_TRUE(ev.ok()) << ev.error().str();
  ASSERT_TRUE(ev->add(attr_for(*pid)).ok());
  ASSERT_TRUE(ev->set_filter("common_pid == " + std::to_string(getpid())).ok());
  ASSERT_TRUE(ev->enable().ok());
  for (int i = 0; i < 13; ++i) syscall(SYS_getppid);
  for (int i = 0; i < 7; ++i) syscall(SYS_getpid);
  ASSERT_TRUE(ev->disable().ok());
  std::map<uint64_t, int> by_id;  // sample id -> count
  ev->drain([&](int, const perf_event_header& h, std::span<const uint8_t> r) {
    Sample s;
    if (h.type == PERF_RECORD_SAMPLE && decode_sample(PERF_SAMPLE_TID | PERF_SAMPLE_ID, r, s))
      ++by_id[s.id];
  });
  std::vector<int> counts;
  for (auto& [id, n] : by_id) counts.push_back(n);
  std::sort(counts.begin(), counts.end());
  // Every CPU's event has its own id; per tracepoint, the counts add up.
  int total = 0;
  for (int n : counts) total += n;
  EXPECT_EQ(total, 20);
  EXPECT_EQ(ev->lost(), 0u);
}

}  // namespace
}  // namespace tracekit::perf
