#include "probe/match.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <chrono>

#include <string>
#include <vector>

#include "probe/spec.hpp"

namespace tracekit::probe {
namespace {

struct Case {
  const char* pattern;
  const char* name;
  bool regex;
  bool expected;
};

TEST(ProbeMatchTest, GlobsAndRegexes) {
  const Case cases[] = {
      // Globs: fnmatch without flags, whole name.
      {"vfs_read", "vfs_read", false, true},
      {"vfs_read", "vfs_readv", false, false},
      {"vfs_*", "vfs_read", false, true},
      {"vfs_*", "vfs_", false, true},
      {"vfs_*", "do_vfs_read", false, false},
      {"*read*", "do_vfs_readv", false, true},
      {"tcp_send?sg", "tcp_sendmsg", false, true},
      {"sys_enter_get[pu]*", "sys_enter_getppid", false, true},
      {"sys_enter_get[pu]*", "sys_enter_getgid", false, false},
      {"*", "", false, true},
      {"foo.isra.0", "foo.isra.0", false, true},
      {"foo.*", "foo.isra.0", false, true},
      {"foo.*", "fooXisra", false, false},  // '.' is a dot in a glob
      // Regexes: searched, not anchored, ECMAScript.
      {"^vfs_(read|write)$", "vfs_read", true, true},
      {"^vfs_(read|write)$", "vfs_write", true, true},
      {"^vfs_(read|write)$", "vfs_readv", true, false},
      {"vfs_", "do_vfs_read", true, true},
      {"^vfs_", "do_vfs_read", true, false},
      {"read$", "vfs_read", true, true},
      {"read$", "vfs_readv", true, false},
      {"^tcp_send.*", "tcp_sendmsg", true, true},
      {"\\d+$", "foo.isra.0", true, true},
      {"vfs_*", "vfs_read", true, true},  // regex "vfs" then any '_'s
      {"(", "anything", true, false},     // does not compile: matches nothing
      // RE2 syntax, searched like Python's re.search.
      {"^tcp_(send|recv)msg$", "tcp_recvmsg", true, true},
      {"(?i)^VFS_READ$", "vfs_read", true, true},
      {"[[:digit:]]+", "foo.isra.0", true, true},
      {"(.*)*zzz", "tcp_sendmsg", true, false},
      {"(.*)*zzz", "a_zzz_b", true, true},
      {"(a)\\1", "aa", true, false},  // backreferences: not RE2, does not compile
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.pattern) + " ~ " + c.name + (c.regex ? " (regex)" : " (glob)"));
    EXPECT_EQ(matches(c.pattern, c.name, c.regex), c.expected);
    auto m = Matcher::make(c.pattern, c.regex);
    if (m.ok()) {
      EXPECT_EQ((*m)(c.name), c.expected);
    }
  }
}

// bcc's -r is Python's re.match: anchored at the name's start, not its end.
TEST(ProbeMatchTest, Anchors) {
  struct AnchorCase {
    const char* pattern;
    const char* name;
    Anchor anchor;
    bool expected;
  };
  const AnchorCase cases[] = {
      {"(write|read)$", "read", Anchor::kStart, true},
      {"(write|read)$", "write", Anchor::kStart, true},
      {"(write|read)$", "_IO_fread", Anchor::kStart, false},
      {"(write|read)$", "__libc_pread", Anchor::kStart, false},
      {"(write|read)$", "_IO_fread", Anchor::kSearch, true},
      {"(write|read)$", "readv", Anchor::kStart, false},
      {"vfs_", "vfs_read", Anchor::kStart, true},
      {"vfs_", "do_vfs_read", Anchor::kStart, false},
      {".*vfs_", "do_vfs_read", Anchor::kStart, true},
      {"sched", "sched", Anchor::kWhole, true},
      {"sched", "sched_ext", Anchor::kWhole, false},
      {"sched", "sched_ext", Anchor::kStart, true},
      {"sched.*", "sched_ext", Anchor::kWhole, true},
      // Globs match the whole name whatever the anchor.
      {"vfs_*", "do_vfs_read", Anchor::kSearch, false},
  };
  for (const AnchorCase& c : cases) {
    SCOPED_TRACE(std::string(c.pattern) + " ~ " + c.name + " anchor " +
                 std::to_string(static_cast<int>(c.anchor)));
    const bool regex = std::string(c.pattern) != "vfs_*";
    auto m = Matcher::make(c.pattern, regex, c.anchor);
    ASSERT_TRUE(m.ok());
    EXPECT_EQ((*m)(c.name), c.expected);
  }
}

TEST(ProbeMatchTest, BadRegexNamesItAndTheReason) {
  auto m = Matcher::make("tcp_(send", true);
  ASSERT_FALSE(m.ok());
  const std::string prefix = "bad regular expression \"tcp_(send\": ";
  EXPECT_EQ(m.error().message.substr(0, prefix.size()), prefix);
  EXPECT_GT(m.error().message.size(), prefix.size());  // std::regex's reason follows
}

// Found by tests/fuzz/match_fuzz.cpp: patterns with nested or many
// optional repeats made std::regex backtrack exponentially ("(a|aa)*b" on 40
// a's ran for over a minute; the fuzzer's own, "x{0,3}y.?????...*?zxyabz" on
// a 39-character C++ name, hit its 5 s timeout: RE2 refuses that one as a
// bad repetition).
TEST(ProbeMatchTest, RegexSearchIsNotExponential) {
  const struct {
    const char* pattern;
    std::string name;
  } cases[] = {
      {"(a|aa)*b", std::string(40, 'a')},
      {"(a?){30}a{30}", std::string(30, 'a')},
  };
  for (const auto& c : cases) {
    auto m = Matcher::make(c.pattern, true);
    ASSERT_TRUE(m.ok()) << c.pattern;
    auto start = std::chrono::steady_clock::now();
    (void)(*m)(c.name);
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start)
                  .count();
    EXPECT_LT(ms, 500) << c.pattern;
  }
  EXPECT_TRUE((*Matcher::make("(a?){30}a{30}", true))(std::string(30, 'a')));
}

TEST(ProbeMatchTest, AnyGlobCompiles) {
  // fnmatch has no compile step: an unbalanced '[' only fails to match.
  auto m = Matcher::make("vfs_[", false);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE((*m)("vfs_read"));
  EXPECT_TRUE((*m)("vfs_["));
}

// Issue 8, row 6: std::regex backtracked "(.*)*zzz" for minutes over the
// kernel's names. In a child with an alarm, so that a regression fails the
// test instead of hanging it: 120,000 names of 60 characters, each of
// which made std::regex try about 2^60 ways.
TEST(ProbeMatchTest, NestedQuantifiersRunInLinearTime) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        alarm(10);
        std::vector<std::string> names;
        for (int i = 0; i < 120000; ++i)
          names.push_back(std::string(56, "abcdefgh_"[i % 9]) + std::to_string(i % 1000));
        for (const char* p : {"(.*)*zzz", "(a|a)*b$", "^(a+)+$x", "(.*.*.*.*.*.*)*zzz"}) {
          auto m = Matcher::make(p, true);
          if (!m) std::exit(3);
          for (const std::string& n : names)
            if ((*m)(n)) std::exit(4);
        }
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// Issue 8, row 10: a 100,000-character pattern overflowed the stack in
// std::regex's compiler. Now it is refused by length, with a message that
// does not repeat it, for globs as for regexes.
TEST(ProbeMatchTest, PatternLengthIsCapped) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (bool regex : {true, false}) {
    SCOPED_TRACE(regex ? "regex" : "glob");
    const std::string huge(100000, 'a');
    EXPECT_EXIT(
        {
          auto m = Matcher::make(huge, regex);
          std::exit(m.ok() ? 1 : 0);
        },
        ::testing::ExitedWithCode(0), "");
    auto m = Matcher::make(huge, regex);
    ASSERT_FALSE(m.ok());
    EXPECT_EQ(m.error().message, std::string(regex ? "regular expression" : "pattern") + " \"" +
                                     std::string(32, 'a') +
                                     "...\" is 100000 characters long: the limit is 4096");
    EXPECT_TRUE(Matcher::make(std::string(kMaxPatternLength, 'a'), regex).ok());
    EXPECT_FALSE(Matcher::make(std::string(kMaxPatternLength + 1, 'a'), regex).ok());
  }
  // Deep nesting within the cap compiles (RE2 keeps its own stacks).
  std::string deep = std::string(2000, '(') + "a" + std::string(2000, ')');
  auto m = Matcher::make(deep, true);
  ASSERT_TRUE(m.ok()) << m.error().str();
  EXPECT_TRUE((*m)("xay"));
}

TEST(ProbeMatchTest, CheckPatternsLooksAtFunctionAndCategory) {
  struct Case {
    const char* spec;
    bool regex;
    bool ok;
  };
  const Case cases[] = {
      {"^tcp_send.*", true, true}, {"t:sched:sched_.*", true, true},
      {"tcp_(send", true, false},  {"t:sch(ed:switch", true, false},
      {"tcp_(send", false, true},  {"t:sch(ed:switch", false, true},
      {"c:mal[loc", false, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto spec = parse_spec(c.spec);
    ASSERT_TRUE(spec.ok());
    EXPECT_EQ(check_patterns(*spec, c.regex).ok(), c.ok);
  }
  auto spec = parse_spec("t:sched:" + std::string(5000, 'x'));
  ASSERT_TRUE(spec.ok());
  auto r = check_patterns(*spec, false);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("is 5000 characters long"), std::string::npos);
}

}  // namespace
}  // namespace tracekit::probe

namespace tracekit::probe {
namespace {

TEST(MatcherOptionalRegex, EmptyIsNoneElseARegexOrItsError) {
  auto none = Matcher::optional_regex("");
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto some = Matcher::optional_regex("^ca+t$");
  ASSERT_TRUE(some.ok());
  ASSERT_TRUE(some->has_value());
  EXPECT_TRUE((**some)("caat"));
  EXPECT_FALSE((**some)("dog"));
  auto bad = Matcher::optional_regex("a(b");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace tracekit::probe
