#include "probe/match.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include <string>

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

TEST(ProbeMatchTest, BadRegexNamesItAndTheReason) {
  auto m = Matcher::make("tcp_(send", true);
  ASSERT_FALSE(m.ok());
  const std::string prefix = "bad regular expression \"tcp_(send\": ";
  EXPECT_EQ(m.error().message.substr(0, prefix.size()), prefix);
  EXPECT_GT(m.error().message.size(), prefix.size());  // std::regex's reason follows
}

// Found by tests/fuzz/match_fuzz.cpp: patterns with nested or many
// optional repeats made std::regex backtrack exponentially ("(a|aa)*b" on 40
// a's ran for over a minute; the fuzzer's own on a 39-character C++ name hit
// its 5 s timeout).
TEST(ProbeMatchTest, RegexSearchIsNotExponential) {
  const struct {
    const char* pattern;
    std::string name;
  } cases[] = {
      {"(a|aa)*b", std::string(40, 'a')},
      {"(a?){30}a{30}", std::string(30, 'a')},
      {"x{0,3}y.???????????????????????????*?zxyabz", "_ZN4llvm12PassRegistry11getPassInfoEPKv"},
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

}  // namespace
}  // namespace tracekit::probe
