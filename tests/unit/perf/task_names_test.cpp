#include "perf/task_names.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace tracekit::perf {
namespace {

std::vector<uint8_t> comm_record(uint32_t pid, uint32_t tid, const std::string& comm, bool exec) {
  size_t name_len = (comm.size() + 1 + 7) / 8 * 8;
  perf_event_header h{PERF_RECORD_COMM, static_cast<uint16_t>(exec ? PERF_RECORD_MISC_COMM_EXEC : 0),
                      static_cast<uint16_t>(sizeof h + 8 + name_len)};
  std::vector<uint8_t> r(h.size, 0);
  std::memcpy(r.data(), &h, sizeof h);
  std::memcpy(r.data() + 8, &pid, 4);
  std::memcpy(r.data() + 12, &tid, 4);
  std::memcpy(r.data() + 16, comm.data(), comm.size());
  return r;
}

std::vector<uint8_t> fork_record(uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid) {
  perf_event_header h{PERF_RECORD_FORK, 0, static_cast<uint16_t>(sizeof(perf_event_header) + 24)};
  std::vector<uint8_t> r(h.size, 0);
  std::memcpy(r.data(), &h, sizeof h);
  uint32_t f[4] = {pid, ppid, tid, ptid};
  std::memcpy(r.data() + 8, f, sizeof f);
  return r;
}

bool feed(TaskNames& t, const std::vector<uint8_t>& r) {
  perf_event_header h;
  std::memcpy(&h, r.data(), sizeof h);
  return t.handle(h, r);
}

class PerfTaskNamesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = std::filesystem::temp_directory_path() / ("tracekit-proc-" + std::to_string(getpid()));
    std::filesystem::create_directories(root_ / "100/task/101");
    std::ofstream(root_ / "100/task/101/comm") << "worker\n";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::filesystem::path root_;
};

TEST_F(PerfTaskNamesTest, ReadsProcForTasksSeenBeforeAnyRecord) {
  TaskNames t(root_.string());
  EXPECT_EQ(t.comm(100, 101, 0), "worker");
  EXPECT_EQ(t.comm(100, 102, 0), "[unknown]");  // gone before it was looked up
}

TEST_F(PerfTaskNamesTest, IdleTaskIsSwapperOfItsCpu) {
  TaskNames t(root_.string());
  EXPECT_EQ(t.comm(0, 0, 3), "swapper/3");
}

TEST_F(PerfTaskNamesTest, CommRecordsWinAndExecIsReported) {
  TaskNames t(root_.string());
  EXPECT_FALSE(feed(t, comm_record(100, 101, "renamed", false)));
  EXPECT_EQ(t.comm(100, 101, 0), "renamed");
  EXPECT_TRUE(feed(t, comm_record(200, 200, "ls", true)));
  EXPECT_EQ(t.comm(200, 200, 0), "ls");
  // An exec'ing thread that is not the group leader is not a new image yet.
  EXPECT_FALSE(feed(t, comm_record(200, 201, "ls", true)));
}

TEST_F(PerfTaskNamesTest, ForkInheritsTheParentsName) {
  TaskNames t(root_.string());
  feed(t, comm_record(300, 300, "bash", true));
  feed(t, fork_record(301, 300, 301, 300));
  EXPECT_EQ(t.comm(301, 301, 0), "bash");
  // Unknown parent: the child's name comes from /proc (here: absent).
  feed(t, fork_record(400, 399, 400, 399));
  EXPECT_EQ(t.comm(400, 400, 0), "[unknown]");
}

}  // namespace
}  // namespace tracekit::perf
