// cachestat: the choice of each role's function by kernel generation, the
// hit/miss formula with its clamps, /proc/meminfo, and the table as
// perf-tools prints it.
#include "cachestat/cachestat.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <sstream>

#include "../tracefs/fake_tree.hpp"
#include "cachestat/render.hpp"

namespace tracekit::cachestat {
namespace {

using Names = std::vector<std::string>;

std::string chosen(Names available) {
  std::sort(available.begin(), available.end());
  auto f = choose_functions(available);
  if (!f) return "error: " + f.error().message;
  return f->accessed + " " + f->buffer_dirty + " " + f->added + " " + f->dirtied;
}

TEST(CachestatFunctions, NewestNameOfEachRole) {
  // 3.13 to 5.15: the page functions.
  EXPECT_EQ(chosen({"mark_page_accessed", "mark_buffer_dirty", "add_to_page_cache_lru",
                    "account_page_dirtied", "vfs_read"}),
            "mark_page_accessed mark_buffer_dirty add_to_page_cache_lru account_page_dirtied");
  // 6.1: folio functions, the page ones kept as wrappers (never both).
  EXPECT_EQ(
      chosen({"folio_mark_accessed", "mark_page_accessed", "mark_buffer_dirty", "filemap_add_folio",
              "add_to_page_cache_lru", "folio_account_dirtied", "__folio_mark_dirty"}),
      "folio_mark_accessed mark_buffer_dirty filemap_add_folio folio_account_dirtied");
  // folio_account_dirtied inlined into its only caller.
  EXPECT_EQ(chosen({"folio_mark_accessed", "mark_buffer_dirty", "filemap_add_folio",
                    "__folio_mark_dirty"}),
            "folio_mark_accessed mark_buffer_dirty filemap_add_folio __folio_mark_dirty");
}

TEST(CachestatFunctions, MissingRoleNamesWhatWasTried) {
  EXPECT_EQ(chosen({"mark_buffer_dirty", "filemap_add_folio", "__folio_mark_dirty"}),
            "error: this kernel has no function to count cache accesses (tried "
            "folio_mark_accessed, mark_page_accessed)");
  EXPECT_EQ(chosen({"folio_mark_accessed", "mark_buffer_dirty", "filemap_add_folio"}),
            "error: this kernel has no function to count page dirties (tried "
            "folio_account_dirtied, account_page_dirtied, __folio_mark_dirty)");
}

struct FormulaCase {
  Calls calls;
  uint64_t hits, misses, dirties;
  double ratio;
};

TEST(CachestatFormula, AsBccComputesIt) {
  const FormulaCase cases[] = {
      // All hits: a file read again.
      {{1000, 0, 0, 0}, 1000, 0, 0, 100.0},
      // A cold read: every page added once and accessed once.
      {{256, 0, 256, 0}, 0, 256, 0, 0.0},
      // Some of each.
      {{300, 0, 100, 0}, 200, 100, 0, 200.0 / 3},
      // Writes: buffer dirties are no accesses, dirtied pages no misses.
      {{110, 10, 40, 30}, 90, 10, 10, 90.0},
      // Readahead added more than was accessed: all misses, never negative.
      {{16, 0, 256, 0}, 0, 16, 0, 0.0},
      // More dirtied than added, more buffer dirties than accesses: zeros.
      {{5, 9, 1, 4}, 0, 0, 9, 0.0},
      // Nothing at all.
      {{0, 0, 0, 0}, 0, 0, 0, 0.0},
  };
  for (const auto& c : cases) {
    Stats s = compute(c.calls);
    EXPECT_EQ(s.hits, c.hits) << c.calls.accessed;
    EXPECT_EQ(s.misses, c.misses) << c.calls.accessed;
    EXPECT_EQ(s.dirties, c.dirties) << c.calls.accessed;
    EXPECT_DOUBLE_EQ(s.ratio, c.ratio) << c.calls.accessed;
  }
}

TEST(CachestatMeminfo, BuffersAndCachedInMiB) {
  Memory m = parse_meminfo(
      "MemTotal:        4012340 kB\n"
      "Buffers:            2048 kB\n"
      "Cached:           524288 kB\n"
      "SwapCached:            0 kB\n"
      "HugePages_Total:       0\n");
  EXPECT_DOUBLE_EQ(m.buffers_mb, 2);
  EXPECT_DOUBLE_EQ(m.cached_mb, 512);
  m = parse_meminfo("MemTotal: 1 kB\n");
  EXPECT_DOUBLE_EQ(m.buffers_mb, 0);
  EXPECT_DOUBLE_EQ(m.cached_mb, 0);
}

TEST(CachestatOutput, AsPerfToolsPrintsIt) {
  Options o;
  EXPECT_EQ(header_line(o), "Counting cache functions... Output every 1 seconds.\n");
  o.interval = 2.5;
  EXPECT_EQ(header_line(o), "Counting cache functions... Output every 2.5 seconds.\n");

  std::ostringstream out;
  output::cachestat_columns(out, false, false);
  Calls c{110, 10, 40, 30};
  Memory m{1.6, 419.4};
  output::cachestat_row(out, "", compute(c), m, nullptr);
  EXPECT_EQ(out.str(),
            "    HITS   MISSES  DIRTIES    RATIO   BUFFERS_MB   CACHE_MB\n"
            "      90       10       10    90.0%            2        419\n");

  out.str("");
  output::cachestat_columns(out, true, true);
  output::cachestat_row(out, "14:02:11", compute(c), m, &c);
  EXPECT_EQ(
      out.str(),
      "TIME         HITS   MISSES  DIRTIES    RATIO   BUFFERS_MB   CACHE_MB  DEBUG\n"
      "14:02:11       90       10       10    90.0%            2        419  (110 10 40 30)\n");
}

// The profiler (no kernel that boots in the VM tier has it): the four
// functions at the top level under the lock, a row from the CPUs' counts
// summed, the counts started again, everything restored.
TEST(CachestatProfiler, RowFromTheCpusCounts) {
  tracefs::FakeTree t;
  t.put("set_ftrace_filter", "#### all functions enabled ####\n");
  t.put("function_profile_enabled", "0\n");
  t.put("trace", "");
  t.put("trace_stat/function0",
        "  Function               Hit    Time            Avg             s^2\n"
        "  --------               ---    ----            ---             ---\n"
        "  folio_mark_accessed    300    120.5 us        0.401 us        0.1 us\n"
        "  filemap_add_folio      100    80.0 us         0.800 us        0.2 us\n");
  t.put("trace_stat/function1",
        "  Function               Hit    Time            Avg             s^2\n"
        "  folio_mark_accessed    10     4.0 us          0.400 us        0.1 us\n"
        "  mark_buffer_dirty      10     4.0 us          0.400 us        0.1 us\n"
        "  __folio_mark_dirty     10     4.0 us          0.400 us        0.1 us\n");
  Functions f{"folio_mark_accessed", "mark_buffer_dirty", "filemap_add_folio",
              "__folio_mark_dirty"};
  Options o;
  o.debug = true;
  funccount::CounterOptions co;
  co.tool = "cachestat";
  co.tracing_dir = t.dir();
  co.lock_path = t.dir() + "/ftrace-lock";
  {
    auto e = start(funccount::Backend::kProfiler, f, o, co);
    ASSERT_TRUE(e) << e.error().str();
    EXPECT_EQ(t.get("ftrace-lock"), std::to_string(getpid()) + "\n");
    std::ostringstream out, err;
    (*e)->stop();
    (*e)->report(out, err);
    // A = 310, B = 10, C = 100, D = 10: 300 accesses, 90 misses, 210 hits.
    const std::string row = out.str();
    EXPECT_EQ(row.substr(0, 35), "     210       90       10    70.0%") << row;
    EXPECT_NE(row.find("  (310 10 100 10)\n"), std::string::npos) << row;
    EXPECT_TRUE(err.str().empty()) << err.str();
  }
  using Lines = std::vector<std::string>;
  EXPECT_EQ(t.writes(), (Lines{
                            "write T/trace ",
                            "write T/set_ftrace_filter folio_mark_accessed mark_buffer_dirty "
                            "filemap_add_folio __folio_mark_dirty",
                            "write T/function_profile_enabled 1",
                            "write T/function_profile_enabled 0",
                            "write T/function_profile_enabled 1",
                            "write T/function_profile_enabled 0",
                            "write T/set_ftrace_filter ",
                            "write T/trace ",
                        }));
  EXPECT_FALSE(t.has("ftrace-lock"));
}

}  // namespace
}  // namespace tracekit::cachestat
