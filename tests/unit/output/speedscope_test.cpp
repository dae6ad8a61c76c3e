// write_speedscope: whole files for the sample report and the odd-names
// report, exactly; units, styles, merging and order as parts of the text.
// Under TRACEKIT_WRITE_SAMPLES=DIR the files are also written there for
// tests/browser/speedscope.test.mjs (speedscope's own importer).
#include "output/speedscope.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

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
  write_speedscope(out, r);
  EXPECT_TRUE(out.good());
  return out.str();
}

TEST(OutputSpeedscopeTest, SampleReport) {
  // Frames numbered in order of first use; samples root first, sorted by
  // frame names: "a<b>..." < "cpuratio" < "kworker/0:1"; func_a's two
  // addresses merged (100 + 20); weights in ns (samples * 10101010).
  const std::string want = R"json({
  "$schema": "https://www.speedscope.app/file-format-schema.json",
  "exporter": "tracekit",
  "name": "profile -F 99 -d -o out.svg 5",
  "activeProfileIndex": 0,
  "shared": {
    "frames": [
      {"name": "a<b>&\"c\""},
      {"name": "[Missed User Stack]"},
      {"name": "x;y", "file": "[kernel.kallsyms]"},
      {"name": "ns::f<int>(int, char const*)", "file": "[kernel.kallsyms]"},
      {"name": "cpuratio"},
      {"name": "__libc_start_call_main", "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"},
      {"name": "main", "file": "/usr/bin/cpuratio"},
      {"name": "func_a", "file": "/usr/bin/cpuratio"},
      {"name": "func_b", "file": "/usr/bin/cpuratio"},
      {"name": "read", "file": "/usr/lib/x86_64-linux-gnu/libc.so.6"},
      {"name": "-"},
      {"name": "entry_SYSCALL_64", "file": "[kernel.kallsyms]"},
      {"name": "iov_iter_zero", "file": "[kernel.kallsyms]"},
      {"name": "__clear_user", "file": "[kernel.kallsyms]"},
      {"name": "kworker/0:1"},
      {"name": "kthread", "file": "[kernel.kallsyms]"},
      {"name": "worker_thread", "file": "[kernel.kallsyms]"},
      {"name": "[unknown]", "file": "[kernel.kallsyms]"}
    ]
  },
  "profiles": [
    {
      "type": "sampled",
      "name": "profile -F 99 -d -o out.svg 5",
      "unit": "nanoseconds",
      "startValue": 0,
      "endValue": 4353535310,
      "samples": [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [4, 5, 6, 8],
        [4, 5, 6, 9, 10, 11, 12, 13],
        [14, 15, 16, 17]
      ],
      "weights": [10101010, 1212121200, 3030303000, 70707070, 30303030]
    }
  ]
}
)json";
  std::string got = written(sample_report());
  EXPECT_EQ(got, want);
  write_sample_file("sample.speedscope.json", got);
}

// Control characters print '?' in frame names, as in the folded output, but
// are escaped in the command line and in files; bytes that are not UTF-8
// become U+FFFD; UTF-8 passes as it is.
TEST(OutputSpeedscopeTest, OddNames) {
  const std::string want =
      "{\n"
      "  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n"
      "  \"exporter\": \"tracekit\",\n"
      "  \"name\": \"stackcount -P\\u000a\\\"x\\\"\",\n"
      "  \"activeProfileIndex\": 0,\n"
      "  \"shared\": {\n"
      "    \"frames\": [\n"
      "      {\"name\": \"tab?here\"},\n"
      "      {\"name\": \"[unknown]\", \"file\": \"/opt/x\\u0001y\"},\n"
      "      {\"name\": \"caf\xef\xbf\xbd\"},\n"
      "      {\"name\": \"\xe6\x97\xa5\"},\n"
      "      {\"name\": \"a?b\", \"file\": \"[kernel.kallsyms]\"}\n"
      "    ]\n"
      "  },\n"
      "  \"profiles\": [\n"
      "    {\n"
      "      \"type\": \"sampled\",\n"
      "      \"name\": \"stackcount -P\\u000a\\\"x\\\"\",\n"
      "      \"unit\": \"none\",\n"
      "      \"startValue\": 0,\n"
      "      \"endValue\": 7,\n"
      "      \"samples\": [\n"
      "        [0, 1, 2],\n"
      "        [3, 4]\n"
      "      ],\n"
      "      \"weights\": [5, 2]\n"
      "    }\n"
      "  ]\n"
      "}\n";
  std::string got = written(odd_report());
  EXPECT_EQ(got, want);
  write_sample_file("odd.speedscope.json", got);
}

TEST(OutputSpeedscopeTest, NothingRecorded) {
  report::Report r = sample_report(report::Unit::kEvents);
  r.records.clear();
  r.command = "stackcount t:sched:x";
  const std::string want = R"({
  "$schema": "https://www.speedscope.app/file-format-schema.json",
  "exporter": "tracekit",
  "name": "stackcount t:sched:x",
  "activeProfileIndex": 0,
  "shared": {
    "frames": []
  },
  "profiles": [
    {
      "type": "sampled",
      "name": "stackcount t:sched:x",
      "unit": "none",
      "startValue": 0,
      "endValue": 0,
      "samples": [],
      "weights": []
    }
  ]
}
)";
  EXPECT_EQ(written(r), want);
}

TEST(OutputSpeedscopeTest, UnitsAndWeights) {
  struct Case {
    report::Unit unit;
    uint64_t period_ns;
    std::string sample_file;  // "": not written for the browser tests
    std::string unit_line, end_line, weights_line;
  };
  const Case cases[] = {
      {report::Unit::kSamples, 10101010, "", R"("unit": "nanoseconds",)",
       R"("endValue": 4353535310,)",
       R"("weights": [10101010, 1212121200, 3030303000, 70707070, 30303030])"},
      // Samples with no period known: counts.
      {report::Unit::kSamples, 0, "", R"("unit": "none",)", R"("endValue": 431,)",
       R"("weights": [1, 120, 300, 7, 3])"},
      {report::Unit::kMicroseconds, 0, "sample-offcpu.speedscope.json",
       R"("unit": "microseconds",)", R"("endValue": 431,)", R"("weights": [1, 120, 300, 7, 3])"},
      {report::Unit::kEvents, 0, "sample-stackcount.speedscope.json", R"("unit": "none",)",
       R"("endValue": 431,)", R"("weights": [1, 120, 300, 7, 3])"},
  };
  for (const Case& c : cases) {
    report::Report r = sample_report(c.unit);
    r.period_ns = c.period_ns;
    std::string got = written(r);
    EXPECT_EQ(line_with(got, "\"unit\""), c.unit_line);
    EXPECT_EQ(line_with(got, "\"endValue\""), c.end_line);
    EXPECT_EQ(line_with(got, "\"weights\""), c.weights_line);
    if (!c.sample_file.empty()) write_sample_file(c.sample_file, got);
  }
}

TEST(OutputSpeedscopeTest, RecordOrderDoesNotMatter) {
  report::Report r = sample_report();
  std::string want = written(r);
  std::reverse(r.records.begin(), r.records.end());
  EXPECT_EQ(written(r), want);
  std::rotate(r.records.begin(), r.records.begin() + 2, r.records.end());
  EXPECT_EQ(written(r), want);
}

// One comm in two processes prints the same folded line: one sample.
TEST(OutputSpeedscopeTest, StacksThatPrintAlikeAreOneSample) {
  report::Report r;
  r.command = "stackcount -P vfs_read";
  r.unit = report::Unit::kEvents;
  report::Record a;
  a.comm = "sh";
  a.pid = 10;
  a.kernel = r.frames.stack({{0x10, "vfs_read", 0, -1}, {0x20, "ksys_read", 0, -1}});
  a.value = 4;
  report::Record b = a;
  b.pid = 11;
  // Another address in the same function.
  b.kernel = r.frames.stack({{0x11, "vfs_read", 0, -1}, {0x20, "ksys_read", 0, -1}});
  b.value = 5;
  r.records = {a, b};
  std::string got = written(r);
  EXPECT_EQ(line_with(got, "\"weights\""), R"("weights": [9])");
  EXPECT_NE(got.find("        [0, 1, 2]\n      ],"), std::string::npos) << got;
}

// Frames named as the folded output names them under the style.
TEST(OutputSpeedscopeTest, StyleNamesFrames) {
  report::Report r = sample_report(report::Unit::kEvents);
  r.style.folded_comm = false;
  r.style.delimiter = false;
  r.style.annotate_kernel = true;
  r.style.offsets = true;
  std::string got = written(r);
  for (const char* want : {
           R"({"name": "entry_SYSCALL_64+0xc_[k]", "file": "[kernel.kallsyms]"})",
           R"({"name": "[unknown]_[k]", "file": "[kernel.kallsyms]"})",
           // func_a at two offsets: two frames now, and two samples.
           R"({"name": "func_a+0x10", "file": "/usr/bin/cpuratio"})",
           R"({"name": "func_a+0x14", "file": "/usr/bin/cpuratio"})",
           R"("weights": [1, 100, 20, 300, 7, 3])",
       })
    EXPECT_NE(got.find(want), std::string::npos) << want << "\n" << got;
  for (const char* absent : {R"({"name": "cpuratio"})", R"({"name": "-"})"})
    EXPECT_EQ(got.find(absent), std::string::npos) << absent;
}

}  // namespace
}  // namespace tracekit::output
