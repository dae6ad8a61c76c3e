// Block events decoded by field name from two kernels' layouts, and -d's
// device names.
#include "family/block/event.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace tracekit::block {
namespace {

constexpr const char* kCommon =
    "format:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";

// block_rq_issue as Linux 6.18 has it.
std::string issue_618() {
  return std::string("name: block_rq_issue\nID: 1101\n") + kCommon +
         "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
         "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
         "\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
         "\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"
         "\tfield:unsigned short ioprio;\toffset:32;\tsize:2;\tsigned:0;\n"
         "\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n"
         "\tfield:char comm[16];\toffset:44;\tsize:16;\tsigned:0;\n"
         "\tfield:__data_loc char[] cmd;\toffset:60;\tsize:4;\tsigned:0;\n\n"
         "print fmt: \"%d,%d %s %u\", ((unsigned int) ((REC->dev) >> 20)), "
         "((unsigned int) ((REC->dev) & ((1U << 20) - 1))), REC->rwbs, REC->bytes\n";
}

// block_rq_complete as Linux 4.11 had it: "errors" (not "error"), no ioprio,
// so every field sits elsewhere.
std::string complete_411() {
  return std::string("name: block_rq_complete\nID: 1102\n") + kCommon +
         "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
         "\tfield:sector_t sector;\toffset:12;\tsize:8;\tsigned:0;\n"
         "\tfield:unsigned int nr_sector;\toffset:20;\tsize:4;\tsigned:0;\n"
         "\tfield:int errors;\toffset:24;\tsize:4;\tsigned:1;\n"
         "\tfield:char rwbs[8];\toffset:28;\tsize:8;\tsigned:0;\n"
         "\tfield:__data_loc char[] cmd;\toffset:36;\tsize:4;\tsigned:0;\n\n"
         "print fmt: \"%d,%d %s\", ((unsigned int) ((REC->dev) >> 20)), "
         "((unsigned int) ((REC->dev) & ((1U << 20) - 1))), REC->rwbs\n";
}

template <class T>
void put(std::vector<uint8_t>& r, size_t at, T v) {
  std::memcpy(r.data() + at, &v, sizeof v);
}

Decoder decoder() {
  auto issue = tracefs::EventFormat::parse(issue_618(), "block");
  auto complete = tracefs::EventFormat::parse(complete_411(), "block");
  EXPECT_TRUE(issue.ok() && complete.ok());
  std::vector<std::pair<Kind, tracefs::EventFormat>> f;
  f.emplace_back(Kind::kIssue, std::move(*issue));
  f.emplace_back(Kind::kComplete, std::move(*complete));
  auto d = Decoder::make(std::move(f));
  EXPECT_TRUE(d.ok());
  return std::move(*d);
}

TEST(IosnoopDecoderTest, ReadsFieldsByNameInEachLayout) {
  Decoder d = decoder();
  std::vector<uint8_t> issue(64, 0);
  put<uint16_t>(issue, 0, 1101);
  put<uint32_t>(issue, 8, (7u << 20) | 3);
  put<uint64_t>(issue, 16, 123456);
  put<uint32_t>(issue, 24, 16);
  put<uint32_t>(issue, 28, 8192);
  std::memcpy(issue.data() + 34, "WS", 2);
  std::memcpy(issue.data() + 44, "dd", 2);
  auto e = d.decode(1101, 99, 4242, issue);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, Kind::kIssue);
  EXPECT_EQ(e->ts, 99u);
  EXPECT_EQ(e->pid, 4242);
  EXPECT_EQ(device_text(e->dev), "7,3");
  EXPECT_EQ(e->sector, 123456u);
  EXPECT_EQ(e->nr_sector, 16u);
  EXPECT_EQ(e->bytes, 8192u);
  EXPECT_EQ(e->rwbs, "WS");
  EXPECT_EQ(e->comm, "dd");

  std::vector<uint8_t> done(40, 0);
  put<uint16_t>(done, 0, 1102);
  put<uint32_t>(done, 8, (7u << 20) | 3);
  put<uint64_t>(done, 12, 123456);
  put<uint32_t>(done, 20, 16);
  std::memcpy(done.data() + 28, "WS", 2);
  auto c = d.decode(1102, 100, 0, done);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Kind::kComplete);
  EXPECT_EQ(c->sector, 123456u);
  EXPECT_EQ(c->nr_sector, 16u);
  EXPECT_EQ(c->bytes, 0u);
  EXPECT_EQ(c->comm, "");
  EXPECT_EQ(c->rwbs, "WS");

  EXPECT_FALSE(d.decode(7, 0, 0, done));                           // another event
  EXPECT_FALSE(d.decode(1101, 0, 0, std::span(issue).first(20)));  // short record
}

TEST(IosnoopDecoderTest, MissingFieldIsAnError) {
  auto f = tracefs::EventFormat::parse(std::string("name: block_rq_issue\nID: 5\n") + kCommon +
                                           "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\n"
                                           "print fmt: \"%d\", REC->dev\n",
                                       "block");
  ASSERT_TRUE(f.ok());
  std::vector<std::pair<Kind, tracefs::EventFormat>> v;
  v.emplace_back(Kind::kIssue, std::move(*f));
  auto d = Decoder::make(std::move(v));
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.error().message.find("block_rq_issue has no field sector"), std::string::npos);
}

TEST(IosnoopDeviceTest, MajorMinorNamesAndPaths) {
  auto sys = std::filesystem::temp_directory_path() / ("iosnoop-sys-" + std::to_string(getpid()));
  std::filesystem::create_directories(sys / "dev/block/202:1");
  auto d = parse_device("202,1", sys.string());
  ASSERT_TRUE(d.ok()) << d.error().str();
  EXPECT_EQ(*d, (202u << 20) | 1);
  EXPECT_EQ(device_text(*d), "202,1");
  EXPECT_FALSE(parse_device("202,x", sys.string()).ok());
  EXPECT_FALSE(parse_device(",1", sys.string()).ok());
  EXPECT_FALSE(parse_device("202,1,2", sys.string()).ok());
  // A number no device has (issue 38: iosnoop -d 999,999 traced nothing).
  auto none = parse_device("202,2", sys.string());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message, "no block device 202,2");
  EXPECT_EQ(none.error().path, sys.string() + "/dev/block/202:2");

  std::filesystem::create_directories(sys / "class/block/loop3");
  std::ofstream(sys / "class/block/loop3/dev") << "7:3\n";
  auto named = parse_device("loop3", sys.string());
  ASSERT_TRUE(named.ok());
  EXPECT_EQ(*named, (7u << 20) | 3);
  auto missing = parse_device("nosuchdisk", sys.string());
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message.find("no block device named \"nosuchdisk\""),
            std::string::npos);
  EXPECT_FALSE(parse_device("../loop3", sys.string()).ok());
  std::filesystem::remove_all(sys);

  auto not_block = parse_device("/dev/null");
  ASSERT_FALSE(not_block.ok());
  EXPECT_NE(not_block.error().message.find("not a block device"), std::string::npos);
}

// A disk that takes bios (3.10's NVMe: no mq/, scheduler "none") is
// refused; blk-mq (mq/) or an elevator ("[mq-deadline] none") is not; a
// partition is its disk's; unreadable sysfs decides nothing.
TEST(IosnoopDeviceTest, BioBasedDisksAreRefused) {
  auto sys = std::filesystem::temp_directory_path() / ("iosnoop-rq-" + std::to_string(getpid()));
  auto disk = [&](const std::string& mm, const char* scheduler, bool mq) {
    auto d = sys / "dev/block" / mm;
    std::filesystem::create_directories(d / "queue");
    std::ofstream(d / "queue/scheduler") << scheduler;
    if (mq) std::filesystem::create_directories(d / "mq");
    return d;
  };
  disk("259:0", "none\n", false);
  disk("259:1", "none\n", true);
  disk("8:0", "[mq-deadline] none\n", false);
  auto part = sys / "dev/block/259:0/nvme0n1p1";
  std::filesystem::create_directories(part);
  std::ofstream(part / "partition") << "1\n";
  std::filesystem::create_directory_symlink(part, sys / "dev/block/259:2");
  auto st = check_request_queue((259u << 20) | 0, "nvme0n1", sys.string());
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message.find("nvme0n1 takes bios, not requests"), std::string::npos);
  EXPECT_FALSE(check_request_queue((259u << 20) | 2, "nvme0n1p1", sys.string()));
  EXPECT_TRUE(check_request_queue((259u << 20) | 1, "nvme0n1", sys.string()));
  EXPECT_TRUE(check_request_queue((8u << 20) | 0, "sda", sys.string()));
  EXPECT_TRUE(check_request_queue((7u << 20) | 9, "loop9", sys.string()));
  std::filesystem::remove_all(sys);
}

}  // namespace
}  // namespace tracekit::block
