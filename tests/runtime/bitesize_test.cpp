// bitesize on this kernel: O_DIRECT reads and writes of known sizes and
// counts on a loop device made by the test (a backing file in /tmp, removed
// at the end even when the test fails). With -d the loop device's requests
// are counted exactly; without it every device's are, so the loop device's
// are included (>=, the system's own I/O can add). perf-tools' bitesize
// (perf stat) runs on the same workload as the peer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>

#include "harness.hpp"

namespace tracekit::testing {
namespace {

// A loop device on a 4 MiB file in /tmp, detached and deleted on
// destruction. Names carry the test's PID and a serial (another helper's
// tests make loop devices too).
class LoopDevice {
 public:
  // partitioned: one partition, sectors 2048 to 6143 (1 to 3 MiB), added
  // with BLKPG (addpart: this kernel reads no partition table format).
  explicit LoopDevice(bool partitioned = false) {
    static int serial = 0;
    file_ =
        "/tmp/tk-bitesize-" + std::to_string(getpid()) + "-" + std::to_string(serial++) + ".img";
    int fd = ::open(file_.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0600);
    if (fd < 0 || ftruncate(fd, 4 << 20) != 0) throw std::runtime_error("cannot make " + file_);
    ::close(fd);
    std::vector<std::string> argv{"/usr/sbin/losetup", "-f", "--show", file_};
    if (partitioned) argv.insert(argv.begin() + 1, "-P");
    auto r = run(argv, 30);
    if (r.exit_code != 0 || r.out.empty()) {
      std::filesystem::remove(file_);
      throw std::runtime_error("losetup failed: " + r.err);
    }
    dev_ = lines_of(r.out)[0];
    if (partitioned) {
      auto a = run({"/usr/bin/addpart", dev_, "1", "2048", "4096"}, 30);
      if (a.exit_code != 0) {
        detach();
        throw std::runtime_error("addpart failed: " + a.err);
      }
    }
  }
  ~LoopDevice() { detach(); }
  LoopDevice(const LoopDevice&) = delete;
  LoopDevice& operator=(const LoopDevice&) = delete;
  const std::string& path() const { return dev_; }
  // The first partition's node (/dev/loopNp1), once it is there.
  std::string partition() const {
    const std::string p = dev_ + "p1";
    for (int i = 0; i < 500 && access(p.c_str(), F_OK) != 0; ++i) usleep(10000);
    return p;
  }

 private:
  void detach() {
    (void)run({"/usr/sbin/losetup", "-d", dev_}, 30);  // its partitions go with it
    std::error_code ec;
    std::filesystem::remove(file_, ec);
  }
  std::string file_, dev_;
};

// The workload: sizes in every default bucket, counts prime and distinct.
const std::vector<std::string> kIo{"r:512:3", "w:4096:5", "r:16384:7", "w:65536:11", "r:131072:13"};
// Its truth in the default buckets (1, 8, 64, 128 Kbytes).
const std::vector<uint64_t> kTruth{3, 5, 7, 11, 13};

const std::string kHeaderRow = "            Kbytes         : I/O      Distribution";

// The counts of the histogram rows in out, in order.
std::vector<uint64_t> counts_of(const std::string& out) {
  std::vector<uint64_t> counts;
  for (const auto& l : lines_of(out)) {
    auto arrow = l.find(" -> "), colon = l.find(": ");
    if (arrow == std::string::npos || colon == std::string::npos || colon < arrow) continue;
    counts.push_back(std::stoull(l.substr(colon + 2)));
  }
  return counts;
}

// The row labels ("          1.0 -> 7.9       "), in order.
std::vector<std::string> labels_of(const std::string& out) {
  std::vector<std::string> labels;
  for (const auto& l : lines_of(out))
    if (l.find(" -> ") != std::string::npos) labels.push_back(l.substr(0, l.find(": ")));
  return labels;
}

class BitesizeRuntime : public TracingTest {
 protected:
  // Runs bitesize with args ("DEV": the loop device) while the workload does
  // its I/O; ended by end (a signal) unless the args give seconds (0).
  RunResult trace_io(std::vector<std::string> args, int end = SIGINT) {
    Workload w("directio", with_dev(kIo));
    for (auto& a : args)
      if (a == "DEV") a = loop_.path();
    args.insert(args.begin(), tool_path("bitesize"));
    Running t(args);
    EXPECT_TRUE(t.wait_for_stdout("...\n", 60)) << "no header";
    kill(w.pid(), SIGUSR1);
    EXPECT_TRUE(w.wait_line("done", 60)) << "the workload did not finish";
    if (!end) return t.finish(60);
    const auto t0 = std::chrono::steady_clock::now();
    t.signal(end);
    auto r = t.finish(60);
    // Within a second, with a margin for this busy machine.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 2.0);
    return r;
  }
  std::vector<std::string> with_dev(const std::vector<std::string>& io) {
    std::vector<std::string> a{loop_.path()};
    a.insert(a.end(), io.begin(), io.end());
    return a;
  }
  LoopDevice loop_;
};

TEST_F(BitesizeRuntime, ExactCountsOnTheLoopDevice) {
  auto r = trace_io({"-d", "DEV"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  auto ls = lines_of(r.out);
  ASSERT_EQ(ls.size(), 8u) << r.out;
  EXPECT_EQ(ls[0], "Tracing block I/O size (bytes) of " + loop_.path() + ", until Ctrl-C...");
  EXPECT_EQ(ls[1], "");
  EXPECT_EQ(ls[2], kHeaderRow);
  EXPECT_EQ(ls[3],
            "              -> 0.9       : 3        |#########                             |");
  EXPECT_EQ(ls[7],
            "        128.0 ->           : 13       |######################################|");
  EXPECT_EQ(counts_of(r.out), kTruth) << r.out;
}

// perf-tools' form of -b (spaces) with the seconds argument (the run ends
// by itself); commas and half-Kbyte edges, ended by SIGTERM.
TEST_F(BitesizeRuntime, CustomBucketsAndSeconds) {
  auto r = trace_io({"-b", "2 16 100", "-d", "DEV", "2"}, 0);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0],
            "Tracing block I/O size (bytes) of " + loop_.path() + ", for 2 seconds...");
  EXPECT_EQ(labels_of(r.out), (std::vector<std::string>{
                                  "              -> 1.9       ", "          2.0 -> 15.9      ",
                                  "         16.0 -> 99.9      ", "        100.0 ->           "}));
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{3, 5, 7 + 11, 13})) << r.out;
  // Half-Kbyte edges (whole sectors), commas.
  r = trace_io({"-b", "0.5,4.5,64", "-d", "DEV"}, SIGTERM);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(counts_of(r.out), (std::vector<uint64_t>{0, 3 + 5, 7, 11 + 13})) << r.out;
}

// Every device: the loop device's requests are among them.
TEST_F(BitesizeRuntime, AllDevicesIncludeTheLoopDevice) {
  auto r = trace_io({}, SIGHUP);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out)[0], "Tracing block I/O size (bytes), until Ctrl-C...");
  auto counts = counts_of(r.out);
  ASSERT_EQ(counts.size(), kTruth.size()) << r.out;
  for (size_t i = 0; i < counts.size(); ++i) EXPECT_GE(counts[i], kTruth[i]) << r.out;
}

// A partition: its disk's requests in its sectors, exactly; the disk's
// other requests are not counted.
TEST_F(BitesizeRuntime, APartitionOfTheDevice) {
  LoopDevice disk(/*partitioned=*/true);
  const std::string part = disk.partition();
  ASSERT_EQ(access(part.c_str(), F_OK), 0) << part << " never appeared";
  Workload in_part("directio", {part, "r:4096:5", "w:65536:7"});
  Workload outside("directio", {disk.path(), "r:4096:11", "w:16384:13"});  // below sector 2048
  Running p({tool_path("bitesize"), "-d", part});
  Running d({tool_path("bitesize"), "-d", disk.path()});
  ASSERT_TRUE(p.wait_for_stdout("...\n", 60));
  ASSERT_TRUE(d.wait_for_stdout("...\n", 60));
  kill(in_part.pid(), SIGUSR1);
  kill(outside.pid(), SIGUSR1);
  ASSERT_TRUE(in_part.wait_line("done", 60));
  ASSERT_TRUE(outside.wait_line("done", 60));
  p.signal(SIGINT);
  d.signal(SIGINT);
  auto rp = p.finish(60), rd = d.finish(60);
  EXPECT_EQ(counts_of(rp.out), (std::vector<uint64_t>{0, 5, 0, 7, 0})) << rp.out << rp.err;
  EXPECT_EQ(counts_of(rd.out), (std::vector<uint64_t>{0, 5 + 11, 13, 7, 0})) << rd.out << rd.err;
}

// Two runs at once count the same requests, each exactly.
TEST_F(BitesizeRuntime, TwoRunsAtOnce) {
  Workload w("directio", with_dev(kIo));
  Running a({tool_path("bitesize"), "-d", loop_.path()});
  Running b({tool_path("bitesize"), "-b", "1,8,64,128", "-d", loop_.path()});
  ASSERT_TRUE(a.wait_for_stdout("...\n", 60));
  ASSERT_TRUE(b.wait_for_stdout("...\n", 60));
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  a.signal(SIGINT);
  b.signal(SIGINT);
  auto ra = a.finish(60), rb = b.finish(60);
  EXPECT_EQ(counts_of(ra.out), kTruth) << ra.out << ra.err;
  EXPECT_EQ(counts_of(rb.out), kTruth) << rb.out << rb.err;
}

// The pid of a descendant of ancestor whose command line is argv
// (NUL-separated); 0 when there is none.
pid_t descendant_running(pid_t ancestor, const std::string& argv) {
  auto parent_of = [](pid_t pid) {
    std::string stat = slurp("/proc/" + std::to_string(pid) + "/stat");
    auto close = stat.rfind(") ");
    if (close == std::string::npos) return 0L;
    std::istringstream rest(stat.substr(close + 2));
    std::string state;
    long ppid = 0;
    rest >> state >> ppid;
    return ppid;
  };
  for (const auto& d : std::filesystem::directory_iterator("/proc")) {
    const std::string name = d.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp(d.path().string() + "/cmdline") != argv) continue;
    for (long p = std::stol(name); p > 1; p = parent_of(static_cast<pid_t>(p)))
      if (p == ancestor) return static_cast<pid_t>(std::stol(name));
  }
  return 0;
}

// perf-tools' bitesize (perf stat, every device) on the same workload at
// the same time: the same rows, and both include the loop device's requests.
TEST_F(BitesizeRuntime, SameAsPerfTools) {
  const std::string peer = "/usr/sbin/bitesize-perf";
  if (access(peer.c_str(), X_OK) != 0 || access("/usr/bin/perf", X_OK) != 0)
    GTEST_SKIP() << "bitesize-perf or perf is not installed (make deps installs them)";
  Workload w("directio", with_dev(kIo));
  Running ours({tool_path("bitesize"), "3"});
  Running theirs({peer, "3"});
  ASSERT_TRUE(ours.wait_for_stdout("...\n", 60));
  // Its counters count from when perf stat's workload ("sleep 3") runs.
  bool started = false;
  for (int i = 0;
       i < 600 && !(started = descendant_running(theirs.pid(), std::string("sleep\0003\0", 8)));
       ++i)
    usleep(20000);
  ASSERT_TRUE(started) << "perf stat never started";
  kill(w.pid(), SIGUSR1);
  ASSERT_TRUE(w.wait_line("done", 60));
  auto a = ours.finish(60), b = theirs.finish(60);
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_EQ(lines_of(a.out)[0], lines_of(b.out)[0]);
  EXPECT_TRUE(contains(b.out, kHeaderRow)) << b.out;
  EXPECT_TRUE(contains(a.out, kHeaderRow)) << a.out;
  EXPECT_EQ(labels_of(a.out), labels_of(b.out)) << a.out << b.out;
  auto ca = counts_of(a.out), cb = counts_of(b.out);
  ASSERT_EQ(ca.size(), kTruth.size()) << a.out;
  ASSERT_EQ(cb.size(), kTruth.size()) << b.out;
  for (size_t i = 0; i < kTruth.size(); ++i) {
    EXPECT_GE(ca[i], kTruth[i]) << a.out;
    EXPECT_GE(cb[i], kTruth[i]) << b.out;
  }
}

// stdout closed early (| head): the run still ends at its seconds, quietly.
TEST_F(BitesizeRuntime, HeadClosesStdout) {
  auto r =
      run({"/bin/bash", "-c",
           tool_path("bitesize") + " -d " + loop_.path() + " 1 | head -1; echo ${PIPESTATUS[0]}"},
          30);
  EXPECT_EQ(r.out, "Tracing block I/O size (bytes) of " + loop_.path() + ", for 1 seconds...\n0\n");
  EXPECT_EQ(r.err, "");
}

TEST_F(BitesizeRuntime, BadInput) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"-b", "8,4"},
                                                                {"-b", "8,8"},
                                                                {"-b", "x"},
                                                                {"-b", "0"},
                                                                {"-b", "0.3"},
                                                                {"-b", ""},
                                                                {"-b", "-1"},
                                                                {"-1"},
                                                                {"0"},
                                                                {"abc"},
                                                                {"1", "2"},
                                                                {"-q"},
                                                                {"-d", ""}}) {
    std::vector<std::string> argv{tool_path("bitesize")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = run(argv, 30);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << r.err;
    EXPECT_TRUE(contains(r.err, "USAGE: bitesize")) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
  auto r = run({tool_path("bitesize"), "-b", "8,4"}, 30);
  EXPECT_TRUE(contains(r.err, "bitesize: bucket list must increase in size")) << r.err;
  for (const auto& dev : {"tk_no_such_disk", "/dev/null", "4096,1"}) {
    r = run({tool_path("bitesize"), "-d", dev, "1"}, 30);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace tracekit::testing
