// profile's pprof file (-o X.pb.gz) read by Go's own pprof (`go tool pprof`,
// Debian's golang-go): the hottest functions and their ratio as profile_test
// wants them and exactly as the folded text of the same run has them, and
// the file's mappings with the build-ids the binaries hold.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// `go` on PATH, or "".
std::string find_go() {
  const char* path = getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    std::string go = (dir.empty() ? "." : dir) + "/go";
    if (access(go.c_str(), X_OK) == 0) return go;
  }
  return "";
}

// The build-id readelf -n finds in path.
std::string readelf_build_id(const std::string& path) {
  auto r = run({"/usr/bin/readelf", "-n", path}, 30);
  std::smatch m;
  static const std::regex kId("Build ID: ([0-9a-f]+)");
  return std::regex_search(r.out, m, kId) ? m[1].str() : "";
}

class PprofRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root: perf_event_open on all CPUs";
    go_ = find_go();
    if (go_.empty()) GTEST_SKIP() << "go is not installed (Debian's golang-go): no go tool pprof";
  }

  // go tool pprof ARGS, offline: its caches and home in dir, no binaries to
  // look for (-symbolize=none: the names are the file's own), no proxy.
  RunResult pprof(const TempDir& dir, std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/env",
                                     "HOME=" + dir.path(),
                                     "GOCACHE=" + dir / "gocache",
                                     "GOPATH=" + dir / "gopath",
                                     "GOFLAGS=",
                                     "GOPROXY=off",
                                     "GOTOOLCHAIN=local",
                                     "PPROF_TMPDIR=" + dir.path(),
                                     "PPROF_BINARY_PATH=" + dir / "nobinaries",
                                     go_,
                                     "tool",
                                     "pprof",
                                     "-symbolize=none"};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv, 120);
  }

  std::string go_;
};

// One row of `pprof -top`: flat and cum, by function name.
struct TopRow {
  std::string flat, cum;
};
std::vector<std::pair<std::string, TopRow>> top_rows(const std::string& text) {
  std::vector<std::pair<std::string, TopRow>> rows;
  static const std::regex kRow(R"(^\s*(\S+)\s+\S+%\s+\S+%\s+(\S+)\s+\S+%\s+(.+)$)");
  bool in_table = false;
  for (const std::string& line : lines_of(text)) {
    std::smatch m;
    if (line.find("flat%") != std::string::npos) {
      in_table = true;
    } else if (in_table && std::regex_match(line, m, kRow)) {
      rows.push_back({m[3].str(), {m[1].str(), m[2].str()}});
    }
  }
  return rows;
}

// The workload spends 3/4 of its CPU time in func_b; at 499 Hz for 4 s,
// about 2000 samples: the same 6-sigma band as profile_test.
// About 3/4 in func_b; the truth is cpuratio's measured share of the
// window (see profile_test.cpp).
constexpr double kTolerance = 0.06;

TEST_F(PprofRuntime, GoPprofReadsProfilesFile) {
  TempDir dir;
  Workload w("cpuratio");
  std::string file = dir / "p.pb.gz";
  const CpuRatioTimes before = cpuratio_times(w);
  auto r = run({tool_path("profile"), "-F", "499", "-f", "-p", w.pid_str(), "-o", file, "4"}, 60);
  const double truth = b_fraction(before, cpuratio_times(w));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + file + " (pprof profile"), std::string::npos) << r.err;

  // The folded text's leaf counts: what pprof's flat sample counts must be.
  std::map<std::string, unsigned long> leaf;
  unsigned long total = 0, under_main = 0;
  for (auto& [stack, n] : parse_folded(r.out)) {
    auto frames = frames_of(stack);
    leaf[frames.back()] += n;
    total += n;
    if (std::find(frames.begin(), frames.end(), "main") != frames.end()) under_main += n;
  }
  unsigned long a = leaf["func_a"], b = leaf["func_b"];
  ASSERT_GT(a + b, 500u) << r.out;
  EXPECT_NEAR(double(b) / double(a + b), truth, kTolerance) << "func_a " << a << " func_b " << b;

  // Sample counts: exactly the folded text's.
  // (Every node: on a busy machine interrupt frames can outnumber main's
  // row in a top 10 by flat count.)
  auto top = pprof(dir, {"-top", "-nodecount=1000", "-sample_index=samples", file});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  auto rows = top_rows(top.out);
  ASSERT_GE(rows.size(), 2u) << top.out;
  EXPECT_EQ(rows[0].first, "func_b") << top.out;
  EXPECT_EQ(rows[1].first, "func_a") << top.out;
  EXPECT_EQ(rows[0].second.flat, std::to_string(b)) << top.out;
  EXPECT_EQ(rows[1].second.flat, std::to_string(a)) << top.out;
  bool main_seen = false;
  for (auto& [name, row] : rows) {
    if (name != "main") continue;
    main_seen = true;
    EXPECT_EQ(row.cum, std::to_string(under_main)) << top.out;
  }
  EXPECT_TRUE(main_seen) << top.out;

  // CPU time (the default sample type): samples times the period, 1e9/499 ns.
  auto cpu = pprof(dir, {"-top", "-nodecount=2", "-unit=ns", file});
  ASSERT_EQ(cpu.exit_code, 0) << cpu.err;
  auto cpu_rows = top_rows(cpu.out);
  ASSERT_EQ(cpu_rows.size(), 2u) << cpu.out;
  const uint64_t period = 1000000000 / 499;
  EXPECT_EQ(cpu_rows[0].first, "func_b");
  EXPECT_EQ(cpu_rows[0].second.flat, std::to_string(b * period) + "ns") << cpu.out;
  EXPECT_EQ(cpu_rows[1].second.flat, std::to_string(a * period) + "ns") << cpu.out;
  EXPECT_NE(cpu.out.find("Type: cpu"), std::string::npos) << cpu.out;

  // -raw: the samples (their counts add up to the folded total, their CPU
  // time is count * period, each labelled with the workload's pid and comm)
  // and the mappings of the workload and libc with the build-ids readelf
  // finds in those files.
  auto raw = pprof(dir, {"-raw", file});
  ASSERT_EQ(raw.exit_code, 0) << raw.err;
  EXPECT_NE(raw.out.find("Period: " + std::to_string(period)), std::string::npos) << raw.out;
  static const std::regex kSample(R"(^\s+(\d+)\s+(\d+): [\d ]+$)");
  unsigned long raw_total = 0;
  int samples = 0;
  for (const std::string& line : lines_of(raw.out)) {
    std::smatch m;
    if (!std::regex_match(line, m, kSample)) continue;
    unsigned long n = std::stoul(m[1].str());
    raw_total += n;
    ++samples;
    EXPECT_EQ(std::stoull(m[2].str()), n * period) << line;
  }
  EXPECT_EQ(raw_total, total) << raw.out;
  EXPECT_NE(raw.out.find("pid:[" + w.pid_str() + "]"), std::string::npos) << raw.out;
  EXPECT_NE(raw.out.find("comm:[cpuratio]"), std::string::npos) << raw.out;

  std::string exe = workload_path("cpuratio");
  char real[PATH_MAX];
  if (realpath(exe.c_str(), real) != nullptr) exe = real;
  // By file, from the Mappings section: build-id, and what pprof says the
  // mapping's locations have ("[FN]": every one a function name).
  std::map<std::string, std::pair<std::string, std::string>> mappings;
  static const std::regex kMapping(R"(^\d+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ (\S+) (\S*) ?(.*)$)");
  bool in_mappings = false;
  for (const std::string& line : lines_of(raw.out)) {
    std::smatch m;
    if (line == "Mappings") {
      in_mappings = true;
    } else if (in_mappings && std::regex_match(line, m, kMapping)) {
      mappings[m[1].str()] = {m[2].str(), m[3].str()};
    }
  }
  std::map<std::string, std::string> build_ids;
  for (auto& [path, m] : mappings) build_ids[path] = m.first;
  EXPECT_EQ(mappings[exe].second, "[FN]") << raw.out;
  ASSERT_EQ(build_ids.count(exe), 1u) << raw.out;
  std::string exe_id = readelf_build_id(exe);
  EXPECT_EQ(exe_id.size(), 40u);
  EXPECT_EQ(build_ids[exe], exe_id);
  std::string libc;
  for (auto& [path, id] : build_ids)
    if (path.find("/libc.so") != std::string::npos) libc = path;
  ASSERT_FALSE(libc.empty()) << raw.out;
  EXPECT_EQ(build_ids[libc], readelf_build_id(libc));
}

}  // namespace
}  // namespace tracekit::testing
