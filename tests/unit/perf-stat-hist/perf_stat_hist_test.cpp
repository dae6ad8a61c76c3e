// perf-stat-hist: bucket lists (-b, power-of), the tracepoint's name, the
// variable's checks, the header and the histogram's text.
#include "perf-stat-hist/perf_stat_hist.hpp"

#include <gtest/gtest.h>

#include "perf-stat-hist/render.hpp"
#include "tracefs/event_format.hpp"

namespace tracekit::perf_stat_hist {
namespace {

using Edges = std::vector<int64_t>;

TEST(PerfStatHistBuckets, SpacesOrCommasIncreasing) {
  EXPECT_EQ(*parse_buckets("10 50 100 500"), (Edges{10, 50, 100, 500}));
  EXPECT_EQ(*parse_buckets("10,50"), (Edges{10, 50}));
  EXPECT_EQ(*parse_buckets(" 10 "), (Edges{10}));
  EXPECT_EQ(*parse_buckets("-5,0 5"), (Edges{-5, 0, 5}));
}

TEST(PerfStatHistBuckets, RejectsWhatIsNotWholeOrDoesNotIncrease) {
  for (const char* bad : {"", ",", "x", "1.5", "10,x", "1e3", "10 10", "10 5",
                          "-9223372036854775808", "99999999999999999999"})
    EXPECT_FALSE(parse_buckets(bad)) << bad;
  EXPECT_EQ(parse_buckets("10 5").error().message, "bucket list must increase in size");
}

TEST(PerfStatHistBuckets, PowerOfAsPerfTools) {
  EXPECT_EQ(power_buckets(4, 1024 * 1024),
            (Edges{0, 1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576}));
  EXPECT_EQ(power_buckets(2, 1024), (Edges{0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}));
  EXPECT_EQ(power_buckets(10, 999), (Edges{0, 1, 10, 100}));
  EXPECT_EQ(power_buckets(4, 0), (Edges{0}));
  // No overflow near the top of int64.
  const auto top = power_buckets(2, INT64_MAX);
  EXPECT_EQ(top.size(), 64u);
  EXPECT_EQ(top.back(), INT64_C(1) << 62);
}

TEST(PerfStatHistTracepoint, CategoryColonEvent) {
  auto tp = split_tracepoint("syscalls:sys_enter_read");
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->first, "syscalls");
  EXPECT_EQ(tp->second, "sys_enter_read");
  for (const char* bad : {"", "read", ":read", "syscalls:", "a:b:c", "../x:y", "a:../../etc",
                          "a b:c", "syscalls:sys_enter_*"})
    EXPECT_FALSE(split_tracepoint(bad)) << bad;
}

constexpr const char* kFormat =
    "name: sys_exit_openat\nID: 781\nformat:\n"
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
    "\tfield:long ret;\toffset:8;\tsize:8;\tsigned:1;\n"
    "\tfield:size_t count;\toffset:16;\tsize:8;\tsigned:0;\n"
    "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
    "\tfield:char comm[16];\toffset:32;\tsize:16;\tsigned:0;\n"
    "\tfield:void * skbaddr;\toffset:48;\tsize:8;\tsigned:0;\n\n"
    "print fmt: \"0x%lx\", REC->ret\n";

TEST(PerfStatHistVariable, NumbersOnlyNamedInTheError) {
  auto ev = tracefs::EventFormat::parse(kFormat, "syscalls");
  ASSERT_TRUE(ev) << ev.error().str();
  EXPECT_TRUE(check_variable(*ev, "ret", {-10, 0}));
  EXPECT_TRUE(check_variable(*ev, "count", {0, 1}));
  EXPECT_TRUE(check_variable(*ev, "skbaddr", {0, 1}));
  auto none = check_variable(*ev, "bytes", {0});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().str(),
            "syscalls:sys_exit_openat has no field 'bytes' (its fields are in tracefs's "
            "events/syscalls/sys_exit_openat/format)");
  EXPECT_EQ(check_variable(*ev, "filename", {0}).error().str(),
            "field 'filename' of syscalls:sys_exit_openat is not a number (it is const char *, "
            "a string)");
  EXPECT_EQ(check_variable(*ev, "comm", {0}).error().str(),
            "field 'comm' of syscalls:sys_exit_openat is not a number (it is char[16], a string)");
  EXPECT_EQ(check_variable(*ev, "count", {-1, 0}).error().str(),
            "field 'count' of syscalls:sys_exit_openat is unsigned: bucket edges must be 0 or "
            "more");
}

TEST(PerfStatHistFilter, NameIsACommOrAGlob) {
  EXPECT_EQ(name_filter(""), "");
  EXPECT_EQ(name_filter("java"), "comm == \"java\"");
  EXPECT_EQ(name_filter("java*"), "comm ~ \"java*\"");
  EXPECT_EQ(name_filter("kworker/?:1"), "comm ~ \"kworker/?:1\"");
}

TEST(PerfStatHistHeader, AsPerfToolsSaysIt) {
  Options o;
  o.system = "syscalls";
  o.event = "sys_enter_read";
  o.power = 4;
  o.edges = power_buckets(4, 1024 * 1024);
  EXPECT_EQ(header_line(o),
            "Tracing syscalls:sys_enter_read, power-of-4, max 1048576, until Ctrl-C...\n");
  o.duration = 5;
  o.power = 2;
  o.edges = power_buckets(2, 1000);  // max is the last edge, as perf-tools prints it
  EXPECT_EQ(header_line(o),
            "Tracing syscalls:sys_enter_read, power-of-2, max 512, for 5 seconds...\n");
  o.power.reset();
  o.edges = {10};
  o.filter = "fd == 3";
  o.duration = 2.5;
  EXPECT_EQ(header_line(o),
            "Tracing syscalls:sys_enter_read (Filter: fd == 3), specified buckets, for 2.5 "
            "seconds...\n");
  o.filter.clear();
  o.pid = 181;
  EXPECT_EQ(header_line(o),
            "Tracing syscalls:sys_enter_read issued by PID 181, specified buckets, for 2.5 "
            "seconds...\n");
  o.pid.reset();
  o.name = "java*";
  o.duration.reset();
  EXPECT_EQ(header_line(o),
            "Tracing syscalls:sys_enter_read issued by process name \"java*\", specified "
            "buckets, until Ctrl-C...\n");
}

TEST(PerfStatHistHistogram, RowsAndBarsAsPerfTools) {
  // perf-tools' example file: -P 2 -m 1024 syscalls:sys_exit_read ret.
  EXPECT_EQ(output::perf_stat_hist_histogram(power_buckets(2, 1024),
                                             {29, 1, 959, 1, 0, 2, 14, 1, 0, 0, 0, 1, 1}),
            "            Range          : Count    Distribution\n"
            "              -> -1        : 29       |##                                    |\n"
            "            0 -> 0         : 1        |#                                     |\n"
            "            1 -> 1         : 959      |######################################|\n"
            "            2 -> 3         : 1        |#                                     |\n"
            "            4 -> 7         : 0        |                                      |\n"
            "            8 -> 15        : 2        |#                                     |\n"
            "           16 -> 31        : 14       |#                                     |\n"
            "           32 -> 63        : 1        |#                                     |\n"
            "           64 -> 127       : 0        |                                      |\n"
            "          128 -> 255       : 0        |                                      |\n"
            "          256 -> 511       : 0        |                                      |\n"
            "          512 -> 1023      : 1        |#                                     |\n"
            "         1024 ->           : 1        |#                                     |\n");
  // And its -b "10 50 100 5000" example.
  EXPECT_EQ(output::perf_stat_hist_histogram({10, 50, 100, 5000}, {989, 5, 0, 2, 0}),
            "            Range          : Count    Distribution\n"
            "              -> 9         : 989      |######################################|\n"
            "           10 -> 49        : 5        |#                                     |\n"
            "           50 -> 99        : 0        |                                      |\n"
            "          100 -> 4999      : 2        |#                                     |\n"
            "         5000 ->           : 0        |                                      |\n");
}

TEST(PerfStatHistHistogram, NothingCountedNegativeEdges) {
  EXPECT_EQ(output::perf_stat_hist_histogram({-3, 0}, {0, 0, 0}),
            "            Range          : Count    Distribution\n"
            "              -> -4        : 0        |                                      |\n"
            "           -3 -> -1        : 0        |                                      |\n"
            "            0 ->           : 0        |                                      |\n");
}

}  // namespace
}  // namespace tracekit::perf_stat_hist
