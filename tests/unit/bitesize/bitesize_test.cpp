// bitesize: bucket lists, the per-bucket filters (perf-tools' sector
// semantics), device numbers, the header, and the histogram's text.
#include "bitesize/bitesize.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "bitesize/render.hpp"
#include "tracefs/event_format.hpp"

namespace tracekit::bitesize {
namespace {

using Edges = std::vector<double>;
using Filters = std::vector<std::string>;

TEST(BitesizeBuckets, CommasOrSpacesIncreasing) {
  EXPECT_EQ(*parse_buckets("1,8,64,128"), (Edges{1, 8, 64, 128}));
  EXPECT_EQ(*parse_buckets("8 16 32"), (Edges{8, 16, 32}));
  EXPECT_EQ(*parse_buckets(" 4, 8 "), (Edges{4, 8}));
  EXPECT_EQ(*parse_buckets("0.5,2.5"), (Edges{0.5, 2.5}));
  EXPECT_EQ(*parse_buckets("16"), (Edges{16}));
}

TEST(BitesizeBuckets, RejectsWhatIsNotWholeSectorsOrDoesNotIncrease) {
  for (const char* bad :
       {"", ",", "x", "8,x", "0", "-1", "0.3", "1e400", "nan", "8,4", "8,8", "4,4.0", "1 2 2"}) {
    auto r = parse_buckets(bad);
    EXPECT_FALSE(r) << bad;
  }
  EXPECT_EQ(parse_buckets("8,4").error().message, "bucket list must increase in size");
}

TEST(BitesizeFilters, SectorsAsPerfTools) {
  EXPECT_EQ(bucket_filters({"nr_sector", 512}, {1, 8, 64, 128}),
            (Filters{"nr_sector < 2", "nr_sector >= 2 && nr_sector < 16",
                     "nr_sector >= 16 && nr_sector < 128", "nr_sector >= 128 && nr_sector < 256",
                     "nr_sector >= 256"}));
  EXPECT_EQ(bucket_filters({"nr_sector", 512}, {0.5}),
            (Filters{"nr_sector < 1", "nr_sector >= 1"}));
}

TEST(BitesizeFilters, BytesAndADevice) {
  EXPECT_EQ(bucket_filters({"bytes", 1}, {4}, "dev == 7340035"),
            (Filters{"(bytes < 4096) && (dev == 7340035)", "(bytes >= 4096) && (dev == 7340035)"}));
}

constexpr const char* kFormat =
    "name: block_rq_issue\nID: 2104\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n"
    "%s"
    "\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n\n"
    "print fmt: \"%%d %%s\", REC->dev, REC->rwbs\n";

std::string format_with(const std::string& fields) {
  char buf[2048];
  std::snprintf(buf, sizeof buf, kFormat, fields.c_str());
  return buf;
}

TEST(BitesizeField, NrSectorFirstElseBytes) {
  auto both = tracefs::EventFormat::parse(
      format_with("\tfield:unsigned int nr_sector;\toffset:24;\tsize:4;\tsigned:0;\n"
                  "\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"),
      "block");
  ASSERT_TRUE(both) << both.error().str();
  EXPECT_EQ(size_field(*both)->name, "nr_sector");
  EXPECT_EQ(size_field(*both)->unit, 512u);
  auto bytes = tracefs::EventFormat::parse(
      format_with("\tfield:unsigned int bytes;\toffset:28;\tsize:4;\tsigned:0;\n"), "block");
  ASSERT_TRUE(bytes);
  EXPECT_EQ(size_field(*bytes)->name, "bytes");
  EXPECT_EQ(size_field(*bytes)->unit, 1u);
  auto neither = tracefs::EventFormat::parse(format_with(""), "block");
  ASSERT_TRUE(neither);
  EXPECT_FALSE(size_field(*neither));
}

TEST(BitesizeDevice, MajorMinor) {
  EXPECT_EQ(*device_number("7,3"), (7u << 20) | 3u);
  EXPECT_EQ(*device_number("259:0"), 259u << 20);
  for (const char* bad : {"7,", ",3", "x,1", "4096,0", "7,1048576", "-1,2"})
    EXPECT_FALSE(device_number(bad)) << bad;
  EXPECT_FALSE(device_number("tk_no_such_disk"));
  EXPECT_EQ(device_number("/dev/null").error().message, "not a block device");
}

// A fake sysfs: /dev/block/M:m links into /devices, where a partition's
// directory sits in its disk's (as the kernel lays it out).
class FakeSysfs {
 public:
  FakeSysfs()
      : root_(std::filesystem::temp_directory_path() /
              ("tk-bitesize-sysfs-" + std::to_string(getpid()))) {
    namespace fs = std::filesystem;
    fs::create_directories(root_ / "devices/vdb/vdb1");
    fs::create_directories(root_ / "dev/block");
    put("devices/vdb/dev", "259:0\n");
    put("devices/vdb/vdb1/dev", "259:1\n");
    put("devices/vdb/vdb1/partition", "1\n");
    put("devices/vdb/vdb1/start", "2048\n");
    put("devices/vdb/vdb1/size", "4096\n");
    fs::create_directory_symlink("../../devices/vdb", root_ / "dev/block/259:0");
    fs::create_directory_symlink("../../devices/vdb/vdb1", root_ / "dev/block/259:1");
  }
  ~FakeSysfs() { std::filesystem::remove_all(root_); }
  std::string path() const { return root_.string(); }

 private:
  void put(const std::string& file, const std::string& text) {
    std::ofstream(root_ / file) << text;
  }
  std::filesystem::path root_;
};

TEST(BitesizeDevice, APartitionIsItsDisksSectors) {
  FakeSysfs sys;
  auto disk = select_device("259,0", sys.path());
  ASSERT_TRUE(disk) << disk.error().str();
  EXPECT_EQ(device_filter(*disk), "dev == " + std::to_string(259u << 20));
  auto part = select_device("259:1", sys.path());
  ASSERT_TRUE(part) << part.error().str();
  EXPECT_EQ(part->dev, 259u << 20);
  EXPECT_EQ(device_filter(*part),
            "dev == " + std::to_string(259u << 20) + " && sector >= 2048 && sector < 6144");
}

TEST(BitesizeHeader, AsPerfToolsSaysIt) {
  Options o;
  EXPECT_EQ(header_line(o), "Tracing block I/O size (bytes), until Ctrl-C...\n");
  o.duration = 10;
  EXPECT_EQ(header_line(o), "Tracing block I/O size (bytes), for 10 seconds...\n");
  o.device = "sda";
  o.duration = 2.5;
  EXPECT_EQ(header_line(o), "Tracing block I/O size (bytes) of sda, for 2.5 seconds...\n");
}

TEST(BitesizeHistogram, RowsAndBarsAsPerfTools) {
  // Text of a perf-tools bitesize run on this machine, counts and all.
  EXPECT_EQ(output::bitesize_histogram({1, 8, 64, 128}, {0, 54, 93, 12, 18}),
            "            Kbytes         : I/O      Distribution\n"
            "              -> 0.9       : 0        |                                      |\n"
            "          1.0 -> 7.9       : 54       |#######################               |\n"
            "          8.0 -> 63.9      : 93       |######################################|\n"
            "         64.0 -> 127.9     : 12       |#####                                 |\n"
            "        128.0 ->           : 18       |########                              |\n");
}

TEST(BitesizeHistogram, NothingCountedOneBucketHugeCounts) {
  EXPECT_EQ(output::bitesize_histogram({16}, {0, 0}),
            "            Kbytes         : I/O      Distribution\n"
            "              -> 15.9      : 0        |                                      |\n"
            "         16.0 ->           : 0        |                                      |\n");
  EXPECT_EQ(output::bitesize_histogram({0.5}, {1, 123456789012ULL}),
            "            Kbytes         : I/O      Distribution\n"
            "              -> 0.4       : 1        |#                                     |\n"
            "          0.5 ->           : 123456789012 |######################################|\n");
}

}  // namespace
}  // namespace tracekit::bitesize
