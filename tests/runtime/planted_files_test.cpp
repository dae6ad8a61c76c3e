// Root must never write where an unprivileged user points it (issue 38):
// every file root opens in a shared directory, attacked as user nobody
// would. A user plants symlinks, FIFOs, /dev/zero and journals in /var/tmp
// and in a sticky world-writable directory like /tmp (a private one, so
// that nothing else on the host is touched); then root runs the tool. The
// victim is a root-only file (mode 0600 in a 0700 directory) that must come
// out as it went in, and no run may hang. Each case failed on 9414711
// (TRACEKIT_BIN=<that build>): the victim was overwritten, or the run was
// SIGKILLed at its time-out.
//
// perf-tools' lock (/var/tmp/.ftrace-lock) is one for the whole host: these
// cases skip, saying so, while someone holds it, and remove all they
// planted.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness.hpp"
#include "tracefs/top_level.hpp"

namespace tracekit::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSetpriv = "/usr/bin/setpriv";
constexpr const char* kLock = "/var/tmp/.ftrace-lock";
// The journal name the top level used beside the lock up to 9414711.
const std::string kOldJournal = std::string(kLock) + ".tracekit-4194999";

class PlantedFilesRuntime : public TracingTest {
 protected:
  void SetUp() override {
    TracingTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (access(kSetpriv, X_OK) != 0) GTEST_SKIP() << kSetpriv << " is missing (util-linux)";
    struct stat st {};
    if (lstat(kLock, &st) == 0)
      GTEST_SKIP() << kLock << " exists: another tracer holds perf-tools' lock";
    // The victim: root's alone.
    char priv[] = "/tmp/tracekit-victim.XXXXXX";
    ASSERT_NE(mkdtemp(priv), nullptr);
    private_ = priv;
    victim_ = private_ + "/secret";
    std::ofstream(victim_) << "secret\n";
    chmod(victim_.c_str(), 0600);
    // A directory like /tmp: anyone's to write to, sticky.
    char shared[] = "/tmp/tracekit-shared.XXXXXX";
    ASSERT_NE(mkdtemp(shared), nullptr);
    shared_ = shared;
    chmod(shared_.c_str(), 01777);
  }
  void TearDown() override {
    for (const std::string& p : {std::string(kLock), kOldJournal}) {
      struct stat st {};
      if (lstat(p.c_str(), &st) == 0 && st.st_uid == 65534) unlink(p.c_str());
    }
    if (!shared_.empty()) fs::remove_all(shared_);
    if (!private_.empty()) fs::remove_all(private_);
    TracingTest::TearDown();
  }
  // Runs argv as user nobody; true when it exited 0.
  static bool as_nobody(const std::vector<std::string>& argv) {
    std::vector<std::string> full{kSetpriv, "--reuid=65534", "--regid=65534", "--clear-groups"};
    full.insert(full.end(), argv.begin(), argv.end());
    auto r = run(full, 10);
    return r.exit_code == 0;
  }
  // A root run with a time-out well past what it takes (about a second).
  static RunResult root_run(const std::vector<std::string>& argv, double timeout_s = 20) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = run(argv, timeout_s);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_FALSE(r.timed_out) << argv[0] << " hung (killed after " << s << " s)\n" << r.err;
    return r;
  }
  // The victim as it went in (what it became otherwise, cut short).
  ::testing::AssertionResult victim_intact() const {
    std::string text = slurp(victim_);
    if (text == "secret\n") return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "root's file was overwritten: \"" << text.substr(0, 60)
                                         << (text.size() > 60 ? "...\"" : "\"");
  }
  std::string private_, victim_, shared_;
};

// Item 1: a journal any user planted beside perf-tools' lock (with a stale
// PID in the lock) made reset-tracing write its lines into any file. Nothing
// is read from /var/tmp now, and the journal directory is root's alone.
TEST_F(PlantedFilesRuntime, APlantedJournalIsNeverReplayed) {
  const std::string dir = fs::path(victim_).parent_path().string();
  const std::string name = fs::path(victim_).filename().string();
  ASSERT_TRUE(as_nobody({"/bin/sh", "-c",
                         "echo 4194999 > " + std::string(kLock) + " && printf '" + dir +
                             "\\nw\\t" + name + "\\tpwned\\n' > " + kOldJournal}));
  // The journals' own directory is no one else's to plant in.
  ASSERT_TRUE(tracekit::tracefs::kJournalDir == std::string("/run/tracekit"));
  EXPECT_FALSE(as_nobody({"/bin/sh", "-c",
                          "mkdir -p /run/tracekit && echo x > /run/tracekit/top-level.4194999"}));
  auto r = root_run({tool_path("reset-tracing")});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(victim_intact());
  EXPECT_NE(r.out.find("removed ftrace lock /var/tmp/.ftrace-lock (no lock: a regular file owned "
                       "by UID 65534)"),
            std::string::npos)
      << r.out;
  struct stat st {};
  EXPECT_NE(lstat(kLock, &st), 0) << "the planted lock was left";
}

// Item 2: -o FILE wrote a temp file FILE.tmp.PID opened with O_TRUNC,
// through a symlink a user planted at that predictable name. The shell
// plants it for its own PID, which exec hands to profile.
TEST_F(PlantedFilesRuntime, OutputNeverWritesThroughALinkAtItsTempName) {
  const std::string out = shared_ + "/flame.svg";
  auto r = root_run({"/bin/sh", "-c",
                     std::string(kSetpriv) +
                         " --reuid=65534 --regid=65534 --clear-groups ln -s " + victim_ + " " +
                         out + ".tmp.$$ && exec " + tool_path("profile") +
                         " -F 49 -o " + out + " 1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(victim_intact());
  struct stat st {};
  ASSERT_EQ(lstat(out.c_str(), &st), 0) << r.err;
  EXPECT_TRUE(S_ISREG(st.st_mode)) << out << " is not the file profile wrote";
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_NE(slurp(out).find("<svg"), std::string::npos);
}

// Item 3: -o on a symlink or FIFO another user planted: stat() followed
// the link (to a block device, which became an SVG; here to the victim),
// and a FIFO blocked the run. Refused now, as protected_symlinks and
// protected_fifos would, whatever the host's sysctls: before tracing
// starts, and when planted during the run, as the file is written. Root's
// own link in the same directory is followed.
TEST_F(PlantedFilesRuntime, OutputRefusesWhatAnotherUserPlanted) {
  const std::string link = shared_ + "/out.svg", fifo = shared_ + "/fifo.svg";
  ASSERT_TRUE(as_nobody({"/bin/ln", "-s", victim_, link}));
  ASSERT_TRUE(as_nobody({"/usr/bin/mkfifo", fifo}));
  const std::string refused_link =
      "refusing to follow a symlink that UID 65534 made in a directory others can write to "
      "(write somewhere only root can, or remove the link)\n";
  auto r = root_run({tool_path("profile"), "-F", "49", "-o", link, "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "profile: cannot write '" + link + "': " + refused_link);
  r = root_run({tool_path("profile"), "-F", "49", "-o", fifo, "1"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "profile: cannot write '" + fifo +
                       "': refusing to write into a FIFO that UID 65534 made in a directory "
                       "others can write to (write somewhere only root can)\n");

  // Planted while profile runs, after its check.
  const std::string late = shared_ + "/late.svg";
  Running p({tool_path("profile"), "-F", "49", "-o", late, "2"});
  ASSERT_TRUE(p.wait_for_stdout(" for 2 secs.", 10));
  ASSERT_TRUE(as_nobody({"/bin/ln", "-s", victim_, late}));
  r = p.finish(20);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("profile: cannot write " + late + ": " + refused_link), std::string::npos)
      << r.err;
  EXPECT_TRUE(victim_intact());
  EXPECT_TRUE(fs::is_symlink(link));

  const std::string mine = shared_ + "/root.svg", real = private_ + "/real.svg";
  fs::create_symlink(real, mine);
  r = root_run({tool_path("profile"), "-F", "49", "-o", mine, "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(slurp(real).find("<svg"), std::string::npos) << r.err;
}

// Items 4-6: the top level (tpoint with instances forced off, as on a
// kernel before 3.13) and reset-tracing, with /dev/zero, a FIFO or a link
// to the victim planted at the lock's name, and links at the journal's old
// name for the next PIDs. The lock was read to 3.9 GB, ignoring SIGTERM;
// a FIFO blocked open() for minutes; the journal was written through a
// link. Each run now ends at once, removes what was planted at the lock's
// name, and leaves the victim alone.
TEST_F(PlantedFilesRuntime, ThePlantedLockNeitherHangsNorIsFollowed) {
  struct Plant {
    const char* what;
    std::vector<std::string> argv;
  };
  const std::vector<Plant> plants = {
      {"a symlink", {"/bin/ln", "-s", "/dev/zero", kLock}},
      {"a FIFO", {"/usr/bin/mkfifo", kLock}},
      {"a symlink", {"/bin/ln", "-s", victim_, kLock}},
  };
  for (const auto& p : plants) {
    SCOPED_TRACE(p.what + (" -> " + p.argv.back()));
    ASSERT_TRUE(as_nobody(p.argv));
    auto r = root_run({tool_path("reset-tracing")});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find(std::string("removed ftrace lock /var/tmp/.ftrace-lock (no lock: ") +
                         p.what + " owned by UID 65534)"),
              std::string::npos)
        << r.out;
    struct stat st {};
    EXPECT_NE(lstat(kLock, &st), 0);

    ASSERT_TRUE(as_nobody(p.argv));
    // Links at the old journal name for the PIDs the shell and tpoint get.
    ForcedFeatures no_instances("-instances");
    r = root_run({"/bin/sh", "-c",
                  std::string(kSetpriv) +
                      " --reuid=65534 --regid=65534 --clear-groups ln -s " + victim_ + " " +
                      kLock + ".tracekit-$$ && exec " + tool_path("tpoint") +
                      " -d 1 sched:sched_switch"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find(std::string("tpoint: removed /var/tmp/.ftrace-lock: no ftrace lock but ") +
                         p.what + " owned by UID 65534"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.out.find("sched_switch:"), std::string::npos);
    EXPECT_NE(lstat(kLock, &st), 0) << "tpoint left the lock";
    EXPECT_NE(lstat(tracekit::tracefs::kJournalDir, &st), 0) << "the journal directory was left";
    EXPECT_TRUE(victim_intact());
    for (const auto& e : fs::directory_iterator("/var/tmp")) {
      const std::string n = e.path().filename().string();
      if (n.rfind(".ftrace-lock.tracekit-", 0) == 0 && fs::is_symlink(e.path())) fs::remove(e.path());
    }
  }
}

// A JIT's /tmp/perf-PID.map names the code it made; /tmp is anyone's, so a
// user can plant one for a root process before it exists or after it is
// gone: a FIFO (which blocked the symbolizer's open for good), a link to
// /dev/zero (one endless line, read into memory), or a file of their own
// naming root's code as they please. None is read now: the frame stays
// [unknown], and the run ends on time.
TEST_F(PlantedFilesRuntime, APlantedPerfMapIsNotRead) {
  Workload w("nofp", {"0", "jit"});
  const std::string map = "/tmp/perf-" + w.pid_str() + ".map";
  std::string line;
  for (int i = 0; i < 100 && line.empty(); ++i) {
    line = slurp(map);
    if (line.empty()) usleep(20000);
  }
  ASSERT_NE(line.find(" nofp_jit_loop"), std::string::npos) << line;
  const std::string forged = line.substr(0, line.find(" nofp_jit_loop")) + " pwned_by_nobody\n";
  struct Plant {
    const char* what;
    std::vector<std::string> argv;
  };
  const std::vector<Plant> plants = {
      {"a FIFO", {"/usr/bin/mkfifo", map}},
      {"a link to /dev/zero", {"/bin/ln", "-s", "/dev/zero", map}},
      {"a file of nobody's", {"/bin/sh", "-c", "printf '" + forged + "' > " + map}},
  };
  for (const auto& p : plants) {
    SCOPED_TRACE(p.what);
    unlink(map.c_str());
    ASSERT_TRUE(as_nobody(p.argv));
    auto r = root_run({tool_path("profile"), "-U", "-F", "199", "-f", "-p", w.pid_str(), "1"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.find("pwned_by_nobody"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("nofp;"), std::string::npos) << "no samples of the workload\n" << r.out;
  }
  unlink(map.c_str());
}

}  // namespace
}  // namespace tracekit::testing
