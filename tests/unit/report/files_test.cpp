#include "report/files.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "output/files.hpp"
#include "sample_report.hpp"
#include "util/strings.hpp"

namespace tracekit::report {
namespace {

TEST(OutputFilesTest, FormatFromExtension) {
  EXPECT_EQ(format_of_path("out.svg"), Format::kSvg);
  EXPECT_EQ(format_of_path("/tmp/x.pb.gz"), Format::kPprof);
  EXPECT_EQ(format_of_path("cpu.pprof"), Format::kPprof);
  EXPECT_EQ(format_of_path("a.speedscope.json"), Format::kSpeedscope);
  EXPECT_EQ(format_of_path("a.json"), Format::kJson);
  EXPECT_EQ(format_of_path("a.folded"), Format::kFolded);
  EXPECT_EQ(format_of_path("a.txt"), Format::kText);
  EXPECT_EQ(format_of_path("a.gz"), std::nullopt);
  EXPECT_EQ(format_of_path("svg"), std::nullopt);
  EXPECT_EQ(format_of_path("a.svg.bak"), std::nullopt);
  for (Format f : {Format::kSvg, Format::kPprof, Format::kSpeedscope, Format::kJson,
                   Format::kFolded, Format::kText})
    EXPECT_EQ(format_named(format_name(f)), f);
  EXPECT_EQ(format_named("text"), Format::kText);
  EXPECT_EQ(format_named("SVG"), std::nullopt);
}

TEST(OutputFilesTest, CommandLineQuotesWhatAShellWould) {
  std::vector<std::string> args = {"profile", "-F", "99", "-o", "out.svg", "it's", "a b", ""};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  EXPECT_EQ(command_line("profile", static_cast<int>(argv.size()), argv.data()),
            "profile -F 99 -o out.svg 'it'\\''s' 'a b' ''");
}

struct Parsed {
  std::optional<int> rc;
  OutputOptions out;
};

Parsed parse(std::vector<std::string> args) {
  args.insert(args.begin(), "profile");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  cli::Command cmd("profile", "[-h] [-o FILE] [--format FORMAT]");
  OutputArgs o;
  o.declare(cmd);
  std::ostringstream out, err;
  Parsed p;
  p.rc = cmd.parse(static_cast<int>(argv.size()), argv.data(), out, err);
  if (!p.rc) p.rc = o.resolve(cmd, static_cast<int>(argv.size()), argv.data(), &p.out);
  return p;
}

TEST(OutputFilesTest, ResolvesFilesAndFormats) {
  auto p = parse({"-o", "/tmp/a.svg", "-o", "/tmp/b.pb.gz"});
  ASSERT_FALSE(p.rc);
  ASSERT_EQ(p.out.files.size(), 2u);
  EXPECT_EQ(p.out.files[0].path, "/tmp/a.svg");
  EXPECT_EQ(p.out.files[0].format, Format::kSvg);
  EXPECT_EQ(p.out.files[1].format, Format::kPprof);
  EXPECT_EQ(p.out.command, "profile -o /tmp/a.svg -o /tmp/b.pb.gz");

  p = parse({"-o", "/tmp/profile.out", "--format", "folded"});
  ASSERT_FALSE(p.rc);
  EXPECT_EQ(p.out.files[0].format, Format::kFolded);

  p = parse({});
  ASSERT_FALSE(p.rc);
  EXPECT_TRUE(p.out.files.empty());
}

TEST(OutputFilesTest, RefusesWhatCannotWork) {
  EXPECT_EQ(parse({"-o", "/tmp/a.out"}).rc, 2);               // no format known
  EXPECT_EQ(parse({"-o", "/tmp/a.svg", "--format", "png"}).rc, 2);
  EXPECT_EQ(parse({"--format", "svg"}).rc, 2);                 // no -o
  EXPECT_EQ(parse({"-o", "/nonexistent-dir/a.svg"}).rc, 1);    // the file system says no
  EXPECT_EQ(parse({"-o", "/tmp"}).rc, 2);                      // a directory: no extension
  EXPECT_EQ(parse({"-o", "/tmp", "--format", "svg"}).rc, 1);   // ... and not writable as a file
}

std::string temp_dir() {
  char tmpl[] = "/tmp/tracekit-files-XXXXXX";
  return mkdtemp(tmpl);
}

// The text files hold what stdout prints for the same report: the records
// merged by text and sorted, biggest last.
TEST(OutputFilesTest, WritesTextAndFoldedFiles) {
  Report r = testing::sample_report();
  std::string dir = temp_dir();
  std::vector<OutputFile> files = {{dir + "/p.folded", Format::kFolded},
                                   {dir + "/p.txt", Format::kText}};
  std::ostringstream err;
  ASSERT_TRUE(output::write_files(r, files, err));
  auto folded = read_file(dir + "/p.folded");
  ASSERT_TRUE(folded.ok());
  EXPECT_EQ(*folded,
            "a<b>&\"c\";[Missed User Stack];x:y;ns::f<int>(int, char const*) 1\n"
            "kworker/0:1;kthread;worker_thread;[unknown] 3\n"
            "cpuratio;__libc_start_call_main;main;read;-;entry_SYSCALL_64;iov_iter_zero;"
            "__clear_user 7\n"
            "cpuratio;__libc_start_call_main;main;func_a 120\n"
            "cpuratio;__libc_start_call_main;main;func_b 300\n");
  auto text = read_file(dir + "/p.txt");
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("    func_b\n    main\n    __libc_start_call_main\n"
                       "    -                cpuratio (4242)\n        300\n\n"),
            std::string::npos)
      << *text;
  EXPECT_EQ(err.str(), "profile: wrote " + dir + "/p.folded (folded stacks, 5 stacks, " +
                           std::to_string(folded->size()) + " bytes)\n" +
                           "profile: wrote " + dir + "/p.txt (text report, 5 stacks, " +
                           std::to_string(text->size()) + " bytes)\n");
  // Nothing else left in the directory (no temporary files).
  EXPECT_EQ(system(("test $(ls -A " + dir + " | wc -l) -eq 2").c_str()), 0);
  EXPECT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

TEST(OutputFilesTest, AFileThatCannotBeWrittenIsSaidAndLeavesNothing) {
  Report r = testing::sample_report();
  std::ostringstream err;
  EXPECT_FALSE(output::write_files(r, {{"/nonexistent-dir/p.folded", Format::kFolded}}, err));
  EXPECT_EQ(err.str().rfind("profile: cannot write /nonexistent-dir/p.folded: ", 0), 0u)
      << err.str();
}

// Devices are written in place, never renamed over: /dev/full fails as a
// full disk would, and stays the device it was.
TEST(OutputFilesTest, DevicesAreWrittenInPlace) {
  Report r = testing::sample_report();
  std::ostringstream err;
  EXPECT_FALSE(output::write_files(r, {{"/dev/full", Format::kFolded}}, err));
  EXPECT_EQ(err.str(), "profile: cannot write /dev/full: write failed: No space left on device\n");
  struct stat st {};
  ASSERT_EQ(stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  std::ostringstream err2;
  EXPECT_TRUE(output::write_files(r, {{"/dev/null", Format::kText}}, err2));
  EXPECT_EQ(err2.str(), "profile: wrote /dev/null (text report, 5 stacks)\n");
}

}  // namespace
}  // namespace tracekit::report
