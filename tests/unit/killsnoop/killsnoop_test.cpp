#include "killsnoop/killsnoop.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "killsnoop/render.hpp"

namespace tracekit::killsnoop {
namespace {

TEST(KillsnoopTest, ArgumentsOfEachCall) {
  const uint64_t kill_args[3] = {4242, 15, 0xdead};
  Record r = entry_from_args(Call::kKill, kill_args);
  EXPECT_EQ(r.target, 4242);
  EXPECT_EQ(r.tgid, 0);
  EXPECT_EQ(r.sig, 15);
  EXPECT_FALSE(r.exit);
  const uint64_t tgkill_args[3] = {100, 101, 12};
  r = entry_from_args(Call::kTgkill, tgkill_args);
  EXPECT_EQ(r.call, Call::kTgkill);
  EXPECT_EQ(r.tgid, 100);
  EXPECT_EQ(r.target, 101);
  EXPECT_EQ(r.sig, 12);
  const uint64_t tkill_args[3] = {7, 9, 0};
  r = entry_from_args(Call::kTkill, tkill_args);
  EXPECT_EQ(r.target, 7);
  EXPECT_EQ(r.sig, 9);
}

// kill(-1, ...) and kill(-PGID, ...): the int in the register's low 32
// bits, whatever the high ones hold (zero-extended by a 32-bit move, or
// sign-extended).
TEST(KillsnoopTest, NegativeTargetsFromEitherExtension) {
  const uint64_t zero_ext[3] = {0xffffffffull, 9, 0};
  EXPECT_EQ(entry_from_args(Call::kKill, zero_ext).target, -1);
  const uint64_t sign_ext[3] = {static_cast<uint64_t>(-1234), 9, 0};
  EXPECT_EQ(entry_from_args(Call::kKill, sign_ext).target, -1234);
}

TEST(KillsnoopTest, CallNames) {
  EXPECT_EQ(call_name(Call::kKill), "kill");
  EXPECT_EQ(call_name(Call::kTkill), "tkill");
  EXPECT_EQ(call_name(Call::kTgkill), "tgkill");
}

TEST(KillsnoopTest, TargetFilters) {
  EXPECT_EQ(target_filter(Call::kKill, 181), "pid == 181");
  EXPECT_EQ(target_filter(Call::kTkill, 181), "pid == 181");
  EXPECT_EQ(target_filter(Call::kTgkill, 181), "tgid == 181 || pid == 181");
}

TEST(KillsnoopTest, SentTo) {
  Kill k;
  k.call = Call::kKill;
  k.target = 5;
  EXPECT_TRUE(sent_to(k, 5));
  EXPECT_FALSE(sent_to(k, 6));
  k.call = Call::kTgkill;
  k.tgid = 6;
  EXPECT_TRUE(sent_to(k, 5));
  EXPECT_TRUE(sent_to(k, 6));
  EXPECT_FALSE(sent_to(k, 7));
  // Only tgkill has a tgid.
  k.call = Call::kTkill;
  EXPECT_FALSE(sent_to(k, 6));
}

TEST(KillsnoopTest, SignalNames) {
  struct {
    int sig;
    const char* name;
  } cases[] = {{0, "0"},        {1, "SIGHUP"},    {9, "SIGKILL"},     {12, "SIGUSR2"},
               {15, "SIGTERM"}, {17, "SIGCHLD"},  {31, "SIGSYS"},     {32, "32"},
               {33, "33"},      {34, "SIGRTMIN"}, {35, "SIGRTMIN+1"}, {64, "SIGRTMIN+30"},
               {65, "65"},      {-1, "-1"}};
  for (const auto& c : cases) EXPECT_EQ(signal_name(c.sig), c.name) << c.sig;
}

Record enter(int tid, uint64_t ts, int target, int sig, Call c = Call::kKill) {
  Record r;
  r.tid = tid;
  r.ts = ts;
  r.call = c;
  r.target = target;
  r.sig = sig;
  return r;
}

Record leave(int tid, uint64_t ts, int64_t ret) {
  Record r;
  r.tid = tid;
  r.ts = ts;
  r.exit = true;
  r.ret = ret;
  return r;
}

TEST(KillsnoopTest, PairsPerThread) {
  Pairing p;
  EXPECT_FALSE(p.push(enter(1, 10, 100, 15)));
  EXPECT_FALSE(p.push(enter(2, 11, 200, 9, Call::kTgkill)));
  EXPECT_EQ(p.pending(), 2u);
  auto b = p.push(leave(2, 12, -3));
  ASSERT_TRUE(b);
  EXPECT_EQ(b->tid, 2);
  EXPECT_EQ(b->ts, 12u);
  EXPECT_EQ(b->call, Call::kTgkill);
  EXPECT_EQ(b->target, 200);
  EXPECT_EQ(b->sig, 9);
  EXPECT_EQ(b->ret, -3);
  auto a = p.push(leave(1, 13, 0));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->target, 100);
  EXPECT_EQ(a->ret, 0);
  EXPECT_EQ(p.pending(), 0u);
}

// An exit without its entry (begun before tracing, or filtered out in the
// kernel) completes nothing; a second entry replaces a first whose exit
// was lost.
TEST(KillsnoopTest, UnpairedExitsAndLostExits) {
  Pairing p;
  EXPECT_FALSE(p.push(leave(1, 5, 0)));
  EXPECT_FALSE(p.push(enter(1, 6, 100, 15)));
  EXPECT_FALSE(p.push(enter(1, 7, 101, 2)));
  auto k = p.push(leave(1, 8, 0));
  ASSERT_TRUE(k);
  EXPECT_EQ(k->target, 101);
  EXPECT_EQ(k->sig, 2);
  EXPECT_FALSE(p.push(leave(1, 9, 0)));
}

TEST(KillsnoopTest, OutputAsPerfTools) {
  std::ostringstream out;
  output::kill_header(out, false);
  output::kill_event(out, {4345768332626123ull, "bash", 25640, 25712, "15", 0}, false);
  output::kill_event(out, {0, "a_very_long_command_name", 7, -1, "SIGKILL", -3}, false);
  EXPECT_EQ(out.str(),
            "COMM             PID    TPID     SIGNAL     RETURN\n"
            "bash             25640  25712    15         0   \n"
            "a_very_long_comm 7      -1       SIGKILL    -3  \n");
  std::ostringstream timed;
  output::kill_header(timed, true);
  output::kill_event(timed, {4345768332626123ull, "bash", 25640, 25712, "SIGTERM", 0}, true);
  EXPECT_EQ(timed.str(),
            "TIMEs            COMM             PID    TPID     SIGNAL     RETURN\n"
            "4345768.332626   bash             25640  25712    SIGTERM    0   \n");
}

// A comm set with prctl(PR_SET_NAME) may hold any byte but NUL: control
// characters print as '?'.
TEST(KillsnoopTest, CommControlCharactersEscaped) {
  std::ostringstream out;
  output::kill_event(out, {0, "a\nb\x1b[2J", 5, 6, "9", 0}, false);
  EXPECT_EQ(out.str(), "a?b?[2J          5      6        9          0   \n");
}

}  // namespace
}  // namespace tracekit::killsnoop

namespace tracekit::killsnoop {
namespace {

TEST(KillsnoopTest, CommFiltersOfPlainNames) {
  EXPECT_EQ(comm_filter("kills"), "comm ~ \"*kills*\"");
  EXPECT_EQ(comm_filter("^kills$"), "comm == \"kills\"");
  EXPECT_EQ(comm_filter("^systemd"), "comm ~ \"systemd*\"");
  EXPECT_EQ(comm_filter("d$"), "comm ~ \"*d\"");
  EXPECT_EQ(comm_filter("kworker/0:1"), "comm ~ \"*kworker/0:1*\"");
  // Regexes, and names no task can have: filtered in user space only.
  for (const char* re : {"kil+s", "a.b", "^$", "", "^", "(x)", "a|b", "x*", "[ab]",
                         "sixteen_chars_xx", "a\"b", "a b"})
    EXPECT_EQ(comm_filter(re), std::nullopt) << re;
}

}  // namespace
}  // namespace tracekit::killsnoop
