// Files others may have planted: what is opened, what is refused, and that
// nothing blocks or is read without bound. The attacks by another user
// (a symlink or FIFO that UID 65534 made in a sticky directory) are in the
// runtime tier (tests/runtime/planted_files_test.cpp), which runs as root.
#include "util/safe_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tracekit {
namespace {

namespace fs = std::filesystem;

class SafeFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/tracekit-safe-file.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string at(const std::string& name) const { return dir_ + "/" + name; }
  static void put(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string get(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  std::string dir_;
};

TEST_F(SafeFileTest, OpenRegularRefusesLinksFifosDevicesAndDirectories) {
  put(at("file"), "text");
  auto ok = open_regular(at("file"));
  ASSERT_TRUE(ok) << ok.error().str();
  auto text = read_at_most(ok->get(), 100);
  ASSERT_TRUE(text);
  EXPECT_EQ(*text, "text");

  fs::create_symlink(at("file"), at("link"));
  auto link = open_regular(at("link"));
  ASSERT_FALSE(link);
  EXPECT_EQ(link.error().err, ELOOP);

  // A FIFO no one writes to: refused at once, not waited on.
  ASSERT_EQ(mkfifo(at("fifo").c_str(), 0644), 0);
  auto t0 = std::chrono::steady_clock::now();
  auto fifo = open_regular(at("fifo"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().message, "refusing to read a FIFO");

  auto dev = open_regular("/dev/zero");
  ASSERT_FALSE(dev);
  EXPECT_EQ(dev.error().message, "refusing to read a character device");
  EXPECT_FALSE(open_regular(dir_));
}

TEST_F(SafeFileTest, ReadAtMostStopsAtItsBound) {
  put(at("big"), std::string(200000, 'x'));
  auto fd = open_regular(at("big"));
  ASSERT_TRUE(fd);
  bool cut = false;
  auto text = read_at_most(fd->get(), 70000, &cut);
  ASSERT_TRUE(text);
  EXPECT_EQ(text->size(), 70000u);
  EXPECT_TRUE(cut);
  put(at("small"), "12\n");
  auto small = open_regular(at("small"));
  ASSERT_TRUE(small);
  text = read_at_most(small->get(), 3, &cut);
  EXPECT_EQ(*text, "12\n");
  EXPECT_FALSE(cut);
}

TEST_F(SafeFileTest, TrustNeedsOurFileOneLinkAndNoOtherWriter) {
  put(at("mine"), "1");
  chmod(at("mine").c_str(), 0644);
  struct stat st {};
  ASSERT_EQ(lstat(at("mine").c_str(), &st), 0);
  EXPECT_EQ(untrusted_reason(st, geteuid()), "");
  chmod(at("mine").c_str(), 0666);
  ASSERT_EQ(lstat(at("mine").c_str(), &st), 0);
  EXPECT_EQ(untrusted_reason(st, geteuid()), "writable by others");
  chmod(at("mine").c_str(), 0600);
  ASSERT_EQ(link(at("mine").c_str(), at("hard").c_str()), 0);
  ASSERT_EQ(lstat(at("mine").c_str(), &st), 0);
  EXPECT_EQ(untrusted_reason(st, geteuid()), "2 hard links to it");
  struct stat other = st;
  other.st_uid = geteuid() + 1;
  other.st_nlink = 1;
  EXPECT_EQ(untrusted_reason(other, geteuid()),
            "a regular file owned by UID " + std::to_string(geteuid() + 1));
  EXPECT_EQ(untrusted_reason(other, geteuid() + 1), "");
}

TEST_F(SafeFileTest, CreateExclusiveNeverOpensWhatIsThere) {
  put(at("victim"), "keep");
  fs::create_symlink(at("victim"), at("link"));
  auto through = create_exclusive(at("link"), 0600);
  ASSERT_FALSE(through);
  EXPECT_EQ(through.error().err, EEXIST);
  EXPECT_EQ(get(at("victim")), "keep");
  auto fresh = create_exclusive(at("new"), 0600);
  ASSERT_TRUE(fresh) << fresh.error().str();
  struct stat st {};
  ASSERT_EQ(fstat(fresh->get(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
}

TEST_F(SafeFileTest, PrivateDirIsMadeOrChecked) {
  ASSERT_TRUE(private_dir(at("journals")));
  struct stat st {};
  ASSERT_EQ(lstat(at("journals").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  EXPECT_TRUE(private_dir(at("journals")));  // again: already there
  chmod(at("journals").c_str(), 0777);
  auto open_dir = private_dir(at("journals"));
  ASSERT_FALSE(open_dir);
  EXPECT_EQ(open_dir.error().message, "a directory others can write to");
  fs::create_directory(at("real"));
  fs::create_directory_symlink(at("real"), at("linked"));
  auto linked = private_dir(at("linked"));
  ASSERT_FALSE(linked);
  EXPECT_EQ(linked.error().message, "not a directory but a symlink");
}

// For paths root names itself (a uprobe's binary): links are followed, but
// what they lead to must be a regular file, and a FIFO is not waited on.
TEST_F(SafeFileTest, OpenRegularFollowedFollowsLinksToFilesOnly) {
  put(at("lib.so"), "\x7f" "ELF");
  fs::create_symlink(at("lib.so"), at("lib.so.1"));
  auto ok = open_regular_followed(at("lib.so.1"));
  ASSERT_TRUE(ok) << ok.error().str();
  ASSERT_EQ(mkfifo(at("fifo").c_str(), 0644), 0);
  fs::create_symlink(at("fifo"), at("to_fifo"));
  auto t0 = std::chrono::steady_clock::now();
  auto fifo = open_regular_followed(at("to_fifo"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().message, "refusing to read a FIFO");
}

std::string written(OutputWriter& w, const std::string& text) {
  w.stream() << text;
  auto s = w.commit();
  return s ? "" : s.error().str();
}

TEST_F(SafeFileTest, OutputReplacesARegularFileByRename) {
  put(at("out.svg"), "old");
  struct stat before {};
  ASSERT_EQ(stat(at("out.svg").c_str(), &before), 0);
  {
    auto w = OutputWriter::open(at("out.svg"));
    ASSERT_TRUE(w) << w.error().str();
    EXPECT_FALSE(w->in_place());
    // Nothing is seen at the path until commit().
    w->stream() << "new text";
    w->stream().flush();
    EXPECT_EQ(get(at("out.svg")), "old");
    ASSERT_TRUE(w->commit());
    EXPECT_EQ(w->bytes_written(), 8u);
  }
  EXPECT_EQ(get(at("out.svg")), "new text");
  struct stat after {};
  ASSERT_EQ(stat(at("out.svg").c_str(), &after), 0);
  EXPECT_NE(after.st_ino, before.st_ino);
  // No fresh file is left beside it, committed or not.
  { auto w = OutputWriter::open(at("dropped.svg")); ASSERT_TRUE(w); w->stream() << "x"; }
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dir_)) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  EXPECT_FALSE(fs::exists(at("dropped.svg")));
}

TEST_F(SafeFileTest, OutputFollowsOurOwnLinksAndWritesDevicesInPlace) {
  fs::create_directory(at("sub"));
  fs::create_symlink("sub/real.txt", at("mine.txt"));
  auto w = OutputWriter::open(at("mine.txt"));
  ASSERT_TRUE(w) << w.error().str();
  EXPECT_EQ(written(*w, "through"), "");
  EXPECT_EQ(get(at("sub/real.txt")), "through");
  EXPECT_TRUE(fs::is_symlink(at("mine.txt")));  // the link stays

  auto null = OutputWriter::open("/dev/null");
  ASSERT_TRUE(null) << null.error().str();
  EXPECT_TRUE(null->in_place());
  EXPECT_EQ(written(*null, "gone"), "");

  // /dev/stdout: through /proc, as the kernel resolves it.
  int saved = dup(1);
  int fd = ::open(at("stdout.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  dup2(fd, 1);
  ::close(fd);
  std::string err;
  {
    auto out = OutputWriter::open("/dev/stdout");
    if (!out) err = out.error().str();
    else err = written(*out, "to stdout") + (out->in_place() ? "" : "renamed");
  }
  dup2(saved, 1);
  ::close(saved);
  EXPECT_EQ(err, "");
  EXPECT_EQ(get(at("stdout.txt")), "to stdout");
  EXPECT_TRUE(fs::is_symlink("/dev/stdout"));

  // A FIFO no one reads: refused at once, not waited on.
  ASSERT_EQ(mkfifo(at("fifo").c_str(), 0644), 0);
  auto fifo = OutputWriter::open(at("fifo"));
  ASSERT_FALSE(fifo);
  EXPECT_EQ(fifo.error().hint, "no process is reading the FIFO");

  auto isdir = OutputWriter::open(at("sub"));
  ASSERT_FALSE(isdir);
  EXPECT_EQ(isdir.error().err, EISDIR);
  auto nodir = OutputWriter::open(at("none/x.svg"));
  ASSERT_FALSE(nodir);
  EXPECT_EQ(nodir.error().err, ENOENT);
}

}  // namespace
}  // namespace tracekit
