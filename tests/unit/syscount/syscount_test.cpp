// syscount: perf-tools' tables (columns per mode, ascending counts, -t),
// syscall names from the kernel's table with a fallback, perf-tools'
// header lines, the tally's keys per mode, and finding a command's program.
#include "syscount/syscount.hpp"

#include <gtest/gtest.h>
#include <sys/syscall.h>

#include <sstream>

#include "syscount/render.hpp"
#include "util/child.hpp"

namespace tracekit::syscount {
namespace {

using output::SyscountRow;

std::string table(bool by_syscall, bool verbose, std::vector<SyscountRow> rows,
                  std::optional<size_t> top = {}) {
  std::ostringstream out;
  output::syscount_table(out, output::syscount_columns(by_syscall, verbose), std::move(rows), top);
  return out.str();
}

TEST(SyscountTable, ByProcessNameAscendingZerosLeftOut) {
  EXPECT_EQ(
      table(
          false, false,
          {{0, "sshd", "", 45796}, {0, "find", "", 61039}, {0, "ps", "", 0}, {0, "stat", "", 450}}),
      "COMM                COUNT\n"
      "stat                  450\n"
      "sshd                45796\n"
      "find                61039\n");
}

// A comm set with prctl(PR_SET_NAME) may hold newlines and ESC: '?'.
TEST(SyscountTable, CommControlCharactersEscaped) {
  EXPECT_EQ(table(false, false, {{0, "x\n1 sshd\x1b[2J", "", 3}}),
            "COMM                COUNT\n"
            "x?1 sshd?[2J            3\n");
}

TEST(SyscountTable, WithPid) {
  EXPECT_EQ(table(false, true, {{42, "bash", "", 7}, {1234567, "a-very-long-comm-", "", 12}}),
            "PID    COMM                COUNT\n"
            "42     bash                    7\n"
            "1234567 a-very-long-comm-       12\n");
}

TEST(SyscountTable, BySyscallTopKeepsTheLargest) {
  EXPECT_EQ(
      table(true, false, {{0, "", "write", 34581}, {0, "", "read", 7673}, {0, "", "close", 7728}},
            size_t{2}),
      "SYSCALL              COUNT\n"
      "close                 7728\n"
      "write                34581\n");
}

TEST(SyscountTable, BySyscallAndPidTiesByText) {
  EXPECT_EQ(table(true, true, {{9, "x", "wait4", 1}, {9, "x", "clone", 1}, {9, "x", "getppid", 3}}),
            "PID    COMM             SYSCALL              COUNT\n"
            "9      x                clone                    1\n"
            "9      x                wait4                    1\n"
            "9      x                getppid                  3\n");
}

TEST(SyscountTable, EmptyIsTheHeaderAlone) {
  EXPECT_EQ(table(true, false, {}), "SYSCALL              COUNT\n");
}

TEST(SyscountLabel, KernelTableElseNumber) {
  EXPECT_EQ(output::syscall_label(SYS_getppid), "getppid");
  EXPECT_EQ(output::syscall_label(SYS_newfstatat), "newfstatat");
  EXPECT_EQ(output::syscall_label(7999), "syscall_7999");
  EXPECT_EQ(output::syscall_label(-1), "syscall_-1");
  EXPECT_EQ(output::syscall_label(100000), "syscall_100000");
}

TEST(SyscountHeader, AsPerfTools) {
  Options o;
  EXPECT_EQ(header_line(o), "Tracing... Ctrl-C to end.\n");
  o.top = 10;
  EXPECT_EQ(header_line(o), "Tracing. Top 10 only... Ctrl-C to end.\n");
  o.duration = 5;
  EXPECT_EQ(header_line(o), "Tracing for 5 seconds. Top 10 only...\n");
  o = {};
  o.duration = 0.5;
  EXPECT_EQ(header_line(o), "Tracing for 0.5 seconds...\n");
  o = {};
  o.pid = 923;
  EXPECT_EQ(header_line(o), "Tracing PID 923... Ctrl-C to end.\n");
  o = {};
  o.command = {"ls", "-l"};
  EXPECT_EQ(header_line(o), "Tracing while running: \"ls -l\"...\n");
}

TEST(SyscountTally, ByNameSumsProcessesOfOneName) {
  Tally t(output::syscount_columns(false, false));
  int asked = 0;
  auto comm = [&](int pid) {
    ++asked;
    return pid == 3 ? std::string("other") : std::string("same");
  };
  for (int i = 0; i < 5; ++i) t.add(1, SYS_read, comm);
  t.add(2, SYS_write, comm);
  t.add(3, SYS_write, comm);
  EXPECT_EQ(asked, 3);  // once per pid
  auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].comm, "other");
  EXPECT_EQ(rows[0].count, 1u);
  EXPECT_EQ(rows[1].comm, "same");
  EXPECT_EQ(rows[1].count, 6u);
  EXPECT_EQ(t.total(), 7u);
}

TEST(SyscountTally, BySyscallAsksNoNames) {
  Tally t(output::syscount_columns(true, false));
  auto comm = [](int) -> std::string {
    ADD_FAILURE() << "no names by syscall alone";
    return "";
  };
  t.add(1, SYS_getppid, comm);
  t.add(2, SYS_getppid, comm);
  t.add(2, 7999, comm);
  auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].syscall, "getppid");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[1].syscall, "syscall_7999");
}

TEST(SyscountTally, ByPidAndSyscall) {
  Tally t(output::syscount_columns(true, true));
  auto comm = [](int pid) { return "p" + std::to_string(pid); };
  t.add(7, SYS_getppid, comm);
  t.add(8, SYS_getppid, comm);
  t.add(7, SYS_getppid, comm);
  auto rows = t.rows();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].pid, 7);
  EXPECT_EQ(rows[0].comm, "p7");
  EXPECT_EQ(rows[0].count, 2u);
  EXPECT_EQ(rows[1].pid, 8);
}

TEST(SyscountProgram, FoundOnPathOrByPath) {
  EXPECT_EQ(find_program("/bin/sh"), std::optional<std::string>("/bin/sh"));
  auto sh = find_program("sh");
  ASSERT_TRUE(sh);
  EXPECT_EQ(sh->substr(sh->size() - 3), "/sh");
  EXPECT_FALSE(find_program("tracekit-no-such-program"));
  EXPECT_FALSE(find_program("/nonexistent/sh"));
  EXPECT_FALSE(find_program("/etc"));  // a directory
  EXPECT_FALSE(find_program(""));
}

}  // namespace
}  // namespace tracekit::syscount
