// write_json: the whole report for the sample and odd-names reports, exactly;
// order, merging, units and times as parts of the text. Under
// TRACEKIT_WRITE_SAMPLES=DIR the files are also written there for
// tests/browser/speedscope.test.mjs (a check against json-report.schema.json).
#include "output/json_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>

#include "../report/odd_report.hpp"
#include "../report/sample_files.hpp"
#include "../report/sample_report.hpp"

namespace tracekit::output {
namespace {

using report::testing::odd_report;
using report::testing::sample_report;
using report::testing::line_with;
using report::testing::write_sample_file;

std::string written(const report::Report& r) {
  std::ostringstream out;
  write_json(out, r);
  EXPECT_TRUE(out.good());
  return out.str();
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Largest value first; func_a's two addresses merged into one entry (100 +
// 20) with the first one's address; raw names (null for the unknown frame,
// no "[unknown]"), leaf first.
TEST(OutputJsonReportTest, SampleReport) {
  const std::string want = R"json(
{
  "format": "tracekit-stacks",
  "version": 1,
  "tool": "profile",
  "command": "profile -F 99 -d -o out.svg 5",
  "host": "testhost",
  "unit": "samples",
  "period_ns": 10101010,
  "start_unix_ns": 1795000000000000000,
  "start_time": "2026-11-18T11:06:40.000000000Z",
  "duration_ns": 5000000000,
  "totals": {"lost_events": 2, "missed_stacks": 0, "dropped": 0, "truncated_stacks": 1},
  "total_value": 431,
  "frame_order": "leaf_first",
  "stacks": [
    {
      "pid": 4242,
      "comm": "cpuratio",
      "value": 300,
      "kernel": null,
      "user": {
        "missed": false,
        "frames": [
          {"name": "func_b", "address": "0x55d0c0de1150", "offset": 16, "file": "/usr/bin/cpuratio"},
          {"name": "main", "address": "0x55d0c0de11a0", "offset": 32, "file": "/usr/bin/cpuratio"},
          {"name": "__libc_start_call_main", "address": "0x7f2c1a229d90", "offset": 128, "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"}
        ]
      }
    },
    {
      "pid": 4242,
      "comm": "cpuratio",
      "value": 120,
      "kernel": null,
      "user": {
        "missed": false,
        "frames": [
          {"name": "func_a", "address": "0x55d0c0de1130", "offset": 16, "file": "/usr/bin/cpuratio"},
          {"name": "main", "address": "0x55d0c0de11a0", "offset": 32, "file": "/usr/bin/cpuratio"},
          {"name": "__libc_start_call_main", "address": "0x7f2c1a229d90", "offset": 128, "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"}
        ]
      }
    },
    {
      "pid": 4242,
      "comm": "cpuratio",
      "value": 7,
      "kernel": {
        "missed": false,
        "frames": [
          {"name": "__clear_user", "address": "0xffffffff81400b30", "offset": 48, "file": "[kernel.kallsyms]"},
          {"name": "iov_iter_zero", "address": "0xffffffff81401a5e", "offset": 94, "file": "[kernel.kallsyms]"},
          {"name": "entry_SYSCALL_64", "address": "0xffffffff81a0000c", "offset": 12, "file": "[kernel.kallsyms]"}
        ]
      },
      "user": {
        "missed": false,
        "frames": [
          {"name": "read", "address": "0x7f2c1a2b3c4d", "offset": 29, "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"},
          {"name": "main", "address": "0x55d0c0de11a0", "offset": 32, "file": "/usr/bin/cpuratio"},
          {"name": "__libc_start_call_main", "address": "0x7f2c1a229d90", "offset": 128, "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"}
        ]
      }
    },
    {
      "pid": 17,
      "comm": "kworker/0:1",
      "value": 3,
      "kernel": {
        "missed": false,
        "frames": [
          {"name": null, "address": "0xffffffff81234567", "offset": null, "file": "[kernel.kallsyms]"},
          {"name": "worker_thread", "address": "0xffffffff810c0000", "offset": 256, "file": "[kernel.kallsyms]"},
          {"name": "kthread", "address": "0xffffffff810c8000", "offset": 64, "file": "[kernel.kallsyms]"}
        ]
      },
      "user": null
    },
    {
      "pid": 99,
      "comm": "a<b>&\"c\"",
      "value": 1,
      "kernel": {
        "missed": false,
        "frames": [
          {"name": "ns::f<int>(int, char const*)", "address": "0xffffffff81500000", "offset": 0, "file": "[kernel.kallsyms]"},
          {"name": "x;y", "address": "0xffffffff81500100", "offset": 0, "file": "[kernel.kallsyms]"}
        ]
      },
      "user": {"missed": true, "frames": []}
    }
  ]
}
)json";
  std::string got = written(sample_report());
  EXPECT_EQ(got, want.substr(1));
  write_sample_file("sample.json", got);
}

// Strings keep what the text formats turn into '?': control characters are
// escaped, bytes that are not UTF-8 become U+FFFD, UTF-8 passes as it is.
TEST(OutputJsonReportTest, OddNames) {
  const std::string want =
      "{\n"
      "  \"format\": \"tracekit-stacks\",\n"
      "  \"version\": 1,\n"
      "  \"tool\": \"stackcount\",\n"
      "  \"command\": \"stackcount -P\\u000a\\\"x\\\"\",\n"
      "  \"host\": \"h\xef\xbf\xbdst\",\n"
      "  \"unit\": \"events\",\n"
      "  \"period_ns\": 0,\n"
      "  \"start_unix_ns\": 1795000000123456789,\n"
      "  \"start_time\": \"2026-11-18T11:06:40.123456789Z\",\n"
      "  \"duration_ns\": 1000000000,\n"
      "  \"totals\": {\"lost_events\": 0, \"missed_stacks\": 0, \"dropped\": 0, "
      "\"truncated_stacks\": 0},\n"
      "  \"total_value\": 7,\n"
      "  \"frame_order\": \"leaf_first\",\n"
      "  \"stacks\": [\n"
      "    {\n"
      "      \"pid\": 1,\n"
      "      \"comm\": \"tab\\u0009here\",\n"
      "      \"value\": 5,\n"
      "      \"kernel\": null,\n"
      "      \"user\": {\n"
      "        \"missed\": false,\n"
      "        \"frames\": [\n"
      "          {\"name\": \"caf\xef\xbf\xbd\", \"address\": \"0x401000\", \"offset\": 8, "
      "\"file\": null},\n"
      "          {\"name\": null, \"address\": \"0x401100\", \"offset\": null, "
      "\"file\": \"/opt/x\\u0001y\"}\n"
      "        ]\n"
      "      }\n"
      "    },\n"
      "    {\n"
      "      \"pid\": 2,\n"
      "      \"comm\": \"\xe6\x97\xa5\",\n"
      "      \"value\": 2,\n"
      "      \"kernel\": {\n"
      "        \"missed\": false,\n"
      "        \"frames\": [\n"
      "          {\"name\": \"a\\u0001b\", \"address\": \"0xffffffff81000010\", \"offset\": 16, "
      "\"file\": \"[kernel.kallsyms]\"}\n"
      "        ]\n"
      "      },\n"
      "      \"user\": null\n"
      "    }\n"
      "  ]\n"
      "}\n";
  std::string got = written(odd_report());
  EXPECT_EQ(got, want);
  write_sample_file("odd.json", got);
}

TEST(OutputJsonReportTest, NothingRecorded) {
  report::Report r = sample_report(report::Unit::kMicroseconds);
  r.tool = "offcputime";
  r.command = "offcputime 1";
  r.records.clear();
  r.totals = {};
  r.start_unix_ns = 0;
  r.duration_ns = 1000000000;
  const std::string want = R"({
  "format": "tracekit-stacks",
  "version": 1,
  "tool": "offcputime",
  "command": "offcputime 1",
  "host": "testhost",
  "unit": "microseconds",
  "period_ns": 0,
  "start_unix_ns": 0,
  "start_time": "1970-01-01T00:00:00.000000000Z",
  "duration_ns": 1000000000,
  "totals": {"lost_events": 0, "missed_stacks": 0, "dropped": 0, "truncated_stacks": 0},
  "total_value": 0,
  "frame_order": "leaf_first",
  "stacks": []
}
)";
  EXPECT_EQ(written(r), want);
}

TEST(OutputJsonReportTest, Units) {
  const std::pair<report::Unit, std::string> cases[] = {
      {report::Unit::kSamples, R"("unit": "samples",)"},
      {report::Unit::kMicroseconds, R"("unit": "microseconds",)"},
      {report::Unit::kEvents, R"("unit": "events",)"},
  };
  for (const auto& [unit, line] : cases)
    EXPECT_EQ(line_with(written(sample_report(unit)), "\"unit\""), line);
}

TEST(OutputJsonReportTest, StartTime) {
  const std::pair<int64_t, std::string> cases[] = {
      {0, "1970-01-01T00:00:00.000000000Z"},
      {1, "1970-01-01T00:00:00.000000001Z"},
      {1795000000123456789, "2026-11-18T11:06:40.123456789Z"},
      {951782400000000000, "2000-02-29T00:00:00.000000000Z"},  // a leap day
      {-1, "1969-12-31T23:59:59.999999999Z"},
      {-1000000000, "1969-12-31T23:59:59.000000000Z"},
  };
  for (const auto& [ns, iso] : cases) {
    report::Report r = sample_report();
    r.start_unix_ns = ns;
    std::string got = written(r);
    EXPECT_EQ(line_with(got, "\"start_time\""), "\"start_time\": \"" + iso + "\",") << ns;
    EXPECT_EQ(line_with(got, "\"start_unix_ns\""),
              "\"start_unix_ns\": " + std::to_string(ns) + ",");
  }
}

TEST(OutputJsonReportTest, RecordOrderDoesNotMatter) {
  report::Report r = sample_report();
  std::string want = written(r);
  std::reverse(r.records.begin(), r.records.end());
  EXPECT_EQ(written(r), want);
  std::rotate(r.records.begin(), r.records.begin() + 2, r.records.end());
  EXPECT_EQ(written(r), want);
}

// Equal values: pid ascending, then comm, then frames.
TEST(OutputJsonReportTest, TiesOrdered) {
  report::Report r;
  r.unit = report::Unit::kEvents;
  auto record = [&r](int64_t pid, std::string comm, std::string frame) {
    report::Record rec;
    rec.pid = pid;
    rec.comm = std::move(comm);
    rec.kernel = r.frames.stack({{0x10, std::move(frame), 0, -1}});
    rec.value = 4;
    return rec;
  };
  r.records = {record(9, "b", "f"), record(9, "a", "g"), record(9, "a", "f"), record(3, "z", "z")};
  std::string got = written(r);
  std::string order;
  for (size_t at = got.find("\"comm\": "); at != std::string::npos;
       at = got.find("\"comm\": ", at + 1)) {
    order += got.substr(at + 9, 1);
    order += got.substr(got.find("{\"name\": ", at) + 10, 1);
    order += ' ';
  }
  EXPECT_EQ(order, "zz af ag bf ");
}

// -v shows addresses: stacks at other addresses print differently and stay
// apart, as in the text output.
TEST(OutputJsonReportTest, MergedAsTheTextOutput) {
  report::Report r = sample_report();
  EXPECT_EQ(count(written(r), "\"pid\""), 5u);
  r.style.addresses = true;
  std::string got = written(r);
  EXPECT_EQ(count(got, "\"pid\""), 6u);
  EXPECT_NE(got.find("\"value\": 100,"), std::string::npos);
  EXPECT_NE(got.find("\"value\": 20,"), std::string::npos);
}

}  // namespace
}  // namespace tracekit::output
