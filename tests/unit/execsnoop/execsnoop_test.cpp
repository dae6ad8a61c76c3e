// execsnoop's pure parts: the argument text, /proc cmdline parsing, the
// process name, who is whose parent and which execs are shown, and the
// lines as perf-tools' execsnoop prints them.
#include "execsnoop/execsnoop.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "execsnoop/render.hpp"

namespace tracekit::execsnoop {
namespace {

TEST(ExecsnoopTest, ArgsTextCutsAtMax) {
  EXPECT_EQ(args_text({"ls", "-l", "/etc"}, 8), "ls -l /etc");
  EXPECT_EQ(args_text({"ls", "-l", "/etc"}, 3), "ls -l /etc");
  EXPECT_EQ(args_text({"ls", "-l", "/etc"}, 2), "ls -l [...]");
  EXPECT_EQ(args_text({"echo", "hello world", ""}, 8), "echo hello world ");
  EXPECT_EQ(args_text({}, 8), "");
}

TEST(ExecsnoopTest, CmdlineArgs) {
  using V = std::vector<std::string>;
  EXPECT_EQ(cmdline_args(std::string_view("ls\0-l\0/etc\0", 11)), (V{"ls", "-l", "/etc"}));
  EXPECT_EQ(cmdline_args(std::string_view("a\0\0b\0", 5)), (V{"a", "", "b"}));
  EXPECT_EQ(cmdline_args("no-nul"), (V{"no-nul"}));
  EXPECT_TRUE(cmdline_args("").empty());
}

TEST(ExecsnoopTest, ProcessName) {
  EXPECT_EQ(process_name("/usr/bin/grep"), "grep");
  EXPECT_EQ(process_name("grep"), "grep");
  EXPECT_EQ(process_name("/usr/lib/a-very-long-program-name"), "a-very-long-program-name");
}

TEST(ExecsnoopTest, LineageParentsAndReexecs) {
  Lineage l;
  EXPECT_FALSE(l.parent(10));
  l.fork(1, 10);
  EXPECT_EQ(l.parent(10), 1);
  EXPECT_TRUE(l.first_exec(10, false));
  EXPECT_FALSE(l.first_exec(10, false));  // a re-exec
  EXPECT_TRUE(l.first_exec(10, true));    // shown with -r
  l.fork(2, 10);                          // the PID reused by a new process
  EXPECT_EQ(l.parent(10), 2);
  EXPECT_TRUE(l.first_exec(10, false));
}

TEST(ExecsnoopTest, LineageIsBounded) {
  Lineage l;
  for (int i = 0; i < static_cast<int>(Lineage::kMaxTracked) + 5; ++i) l.fork(1, 100 + i);
  EXPECT_FALSE(l.parent(100));  // forgotten
  EXPECT_EQ(l.parent(100 + static_cast<int>(Lineage::kMaxTracked) + 4), 1);
}

TEST(ExecsnoopTest, ExecCallsFetchOneMoreThanShown) {
  auto calls = exec_calls(8);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].name, "execve");
  EXPECT_EQ(calls[0].arg, 1);
  EXPECT_EQ(calls[0].argv, 9);
  EXPECT_EQ(calls[1].name, "execveat");
  EXPECT_EQ(calls[1].arg, 2);
}

TEST(ExecsnoopTest, Lines) {
  std::ostringstream out;
  output::exec_header(out, false);
  output::exec_event(out, {6610526988000, 25310, 25240, "/bin/echo hello world"}, false);
  output::exec_header(out, true);
  output::exec_event(out, {6610526988000, 5, 0, "ls [?]"}, true);
  EXPECT_EQ(out.str(),
            "   PID   PPID ARGS\n"
            " 25310  25240 /bin/echo hello world\n"
            "TIMEs               PID   PPID ARGS\n"
            "6610.526988           5      0 ls [?]\n");
}

// An argument with a newline would forge a whole line (a fake sshd exec),
// one with ESC reach the terminal: control characters print in cat -v's
// caret form, as perf-tools' execsnoop (through cat -v) shows them; UTF-8
// prints as it is, C1 controls as cat -v shows their byte.
TEST(ExecsnoopTest, LinesEscapeControlCharacters) {
  std::ostringstream out;
  output::exec_event(out, {0, 7, 1, "sh -c x\n   666      1 /usr/sbin/sshd\x1b[2J\t\x7f"}, false);
  output::exec_event(out, {0, 8, 1, "echo gr\xc3\xbc\xc3\x9f \xc2\x9b" "31m \x9b"}, false);
  EXPECT_EQ(out.str(),
            "     7      1 sh -c x^J   666      1 /usr/sbin/sshd^[[2J^I^?\n"
            "     8      1 echo gr\xc3\xbc\xc3\x9f M-^[31m M-^[\n");
}

}  // namespace
}  // namespace tracekit::execsnoop
