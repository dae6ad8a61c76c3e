#include "symbols/perf_map.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace tracekit::symbols {
namespace {

PerfMap parse(const std::string& text, std::string path = {}) {
  std::istringstream in(text);
  PerfMap pm = PerfMap::parse(in);
  pm.set_path(std::move(path));
  return pm;
}

struct Case {
  uint64_t addr;
  const char* name;  // nullptr: nullopt expected
  uint64_t offset;
};

void check(const PerfMap& pm, const Case& c) {
  SCOPED_TRACE(testing::Message() << std::hex << c.addr);
  auto r = pm.lookup(c.addr);
  if (c.name == nullptr) {
    EXPECT_FALSE(r.has_value()) << r->name;
    return;
  }
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->name, c.name);
  EXPECT_EQ(r->offset, c.offset);
}

TEST(SymbolsPerfMapTest, ParseAndLookup) {
  PerfMap pm = parse(
      "1000 100 jit_a\n"
      "0x2000 0x10 LFoo;::bar (int) with spaces\n"
      "3000 zz bad_size\n"
      "nothing\n"
      "4000 0 zero_size\n"
      "5000 10\n"
      "qq 10 bad_start\n"
      "ffffffffffffff00 200 wraps\n"
      "  6000\t 20   padded_name  \r\n"
      "\n",
      "/tmp/perf-42.map");
  EXPECT_EQ(pm.size(), 3u);
  const Case cases[] = {
      {0xfff, nullptr, 0},
      {0x1000, "jit_a", 0},
      {0x10ff, "jit_a", 0xff},
      {0x1100, nullptr, 0},  // end is exclusive
      {0x2005, "LFoo;::bar (int) with spaces", 5},
      {0x2010, nullptr, 0},
      {0x3000, nullptr, 0},
      {0x4000, nullptr, 0},
      {0x5005, nullptr, 0},
      {0x6010, "padded_name", 0x10},
      {0x6020, nullptr, 0},
  };
  for (const Case& c : cases) check(pm, c);
  auto r = pm.lookup(0x1000);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->module, "/tmp/perf-42.map");
}

TEST(SymbolsPerfMapTest, UnsortedInputAndEmptyPath) {
  PerfMap pm = parse("3000 10 c\n1000 10 a\n2000 10 b\n");
  EXPECT_EQ(pm.size(), 3u);
  const Case cases[] = {{0x1001, "a", 1}, {0x2002, "b", 2}, {0x3003, "c", 3}};
  for (const Case& c : cases) check(pm, c);
  EXPECT_EQ(pm.lookup(0x1001)->module, "");
}

TEST(SymbolsPerfMapTest, LaterLinesWinWhereTheyOverlap) {
  const struct {
    const char* text;
    size_t size;
    std::vector<Case> cases;
  } tables[] = {
      // A new function inside an old one splits it; offsets of the old one's
      // right part still count from its start.
      {"1000 100 old\n1040 20 new\n",
       3,
       {{0x1010, "old", 0x10}, {0x1045, "new", 5}, {0x1070, "old", 0x70}, {0x1100, nullptr, 0}}},
      {"1000 100 a\n1000 100 b\n", 1, {{0x1000, "b", 0}, {0x10ff, "b", 0xff}}},
      {"1040 20 inner\n1000 100 outer\n", 1, {{0x1045, "outer", 0x45}}},
      // Straddling both neighbours.
      {"1000 100 a\n1100 100 b\n1080 100 c\n",
       3,
       {{0x107f, "a", 0x7f}, {0x1080, "c", 0}, {0x117f, "c", 0xff}, {0x1180, "b", 0x80}}},
  };
  for (const auto& t : tables) {
    SCOPED_TRACE(t.text);
    PerfMap pm = parse(t.text);
    EXPECT_EQ(pm.size(), t.size);
    for (const Case& c : t.cases) check(pm, c);
  }
}

TEST(SymbolsPerfMapTest, LoadReadsTheFileAndNamesItTheModule) {
  std::string path = ::testing::TempDir() + "symbols_perf_map_load.map";
  {
    std::ofstream out(path);
    out << "1000 100 jit_a\n";
  }
  auto pm = PerfMap::load(path, geteuid());
  std::remove(path.c_str());
  ASSERT_TRUE(pm.has_value());
  check(*pm, {0x1010, "jit_a", 0x10});
  EXPECT_EQ(pm->lookup(0x1010)->module, path);
  EXPECT_FALSE(PerfMap::load(path, geteuid()).has_value());
}

// /tmp is anyone's: a symlink (to /dev/zero, or to another process's map),
// a FIFO or a device planted at a map's name is not read, and nothing
// waits on it.
TEST(SymbolsPerfMapTest, LoadReadsNoLinkFifoOrDevice) {
  const std::string dir = ::testing::TempDir() + "symbols_perf_map_planted";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directory(dir);
  {
    std::ofstream out(dir + "/real.map");
    out << "1000 100 jit_a\n";
  }
  std::filesystem::create_symlink(dir + "/real.map", dir + "/link.map");
  std::filesystem::create_symlink("/dev/zero", dir + "/zero.map");
  ASSERT_EQ(mkfifo((dir + "/fifo.map").c_str(), 0644), 0);
  EXPECT_TRUE(PerfMap::load(dir + "/real.map", geteuid()).has_value());
  for (const char* planted : {"/link.map", "/zero.map", "/fifo.map"})
    EXPECT_FALSE(PerfMap::load(dir + planted, geteuid()).has_value()) << planted;
  EXPECT_FALSE(PerfMap::load("/dev/zero", geteuid()).has_value());
  std::filesystem::remove_all(dir);
}

TEST(SymbolsPerfMapTest, EmptyInput) {
  PerfMap pm = parse("");
  EXPECT_EQ(pm.size(), 0u);
  EXPECT_FALSE(pm.lookup(0x1000).has_value());
}

}  // namespace
}  // namespace tracekit::symbols
