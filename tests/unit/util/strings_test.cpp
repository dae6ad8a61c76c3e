#include "util/strings.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit {
namespace {

template <class T>
struct NumberCase {
  std::string_view in;
  std::optional<T> want;
};

TEST(UtilElideTest, CapsWhatErrorsEcho) {
  EXPECT_EQ(elide(""), "");
  EXPECT_EQ(elide(std::string(64, 'a')), std::string(64, 'a'));
  EXPECT_EQ(elide(std::string(100000, 'a')), std::string(64, 'a') + "...");
  EXPECT_EQ(elide("abcdef", 3), "abc...");
  // Not in the middle of a UTF-8 character: "é" is 2 bytes (c3 a9).
  EXPECT_EQ(elide("ab\xc3\xa9" "cd", 3), "ab...");
  EXPECT_EQ(elide("ab\xc3\xa9" "cd", 4), "ab\xc3\xa9...");
}

TEST(UtilParseIntTest, Int) {
  const std::vector<NumberCase<int>> cases = {
      {"0", 0},
      {"42", 42},
      {"-5", -5},
      {"2147483647", 2147483647},
      {"", std::nullopt},
      {"12a", std::nullopt},
      {" 12", std::nullopt},
      {"12 ", std::nullopt},
      {"+5", std::nullopt},
      {"2147483648", std::nullopt},
      {"0x10", std::nullopt},
      {"-", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_int<int>(c.in), c.want) << '"' << c.in << '"';
}

TEST(UtilParseIntTest, Unsigned) {
  const std::vector<NumberCase<uint32_t>> cases = {
      {"0", 0u},   {"4294967295", 4294967295u}, {"4294967296", std::nullopt}, {"-1", std::nullopt},
      {"007", 7u},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_int<uint32_t>(c.in), c.want) << '"' << c.in << '"';
  EXPECT_EQ(parse_int<uint64_t>("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(parse_int<uint64_t>("18446744073709551616"), std::nullopt);
  EXPECT_EQ(parse_int<uint8_t>("256"), std::nullopt);
}

TEST(UtilParseHexTest, Uint64) {
  const std::vector<NumberCase<uint64_t>> cases = {
      {"ff", 0xffu},
      {"0xff", 0xffu},
      {"0XFF", 0xffu},
      {"ffffffff81000000", 0xffffffff81000000u},
      {"0xffffffffffffffff", UINT64_MAX},
      {"0", 0u},
      {"00", 0u},
      {"", std::nullopt},
      {"0x", std::nullopt},
      {"x1", std::nullopt},
      {"0x0x1", std::nullopt},
      {"fg", std::nullopt},
      {" ff", std::nullopt},
      {"0x1ffffffffffffffff", std::nullopt},
      {"-1", std::nullopt},
  };
  for (const auto& c : cases) EXPECT_EQ(parse_hex<uint64_t>(c.in), c.want) << '"' << c.in << '"';
}

TEST(UtilSplitTest, Fields) {
  const std::vector<std::pair<std::string_view, std::vector<std::string_view>>> cases = {
      {"a,b,c", {"a", "b", "c"}},
      {"a,,b", {"a", "", "b"}},
      {"abc", {"abc"}},
      {"", {""}},
      {",", {"", ""}},
      {"a,b,", {"a", "b", ""}},
      {",a", {"", "a"}},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(split(in, ','), want) << '"' << in << '"';
  EXPECT_EQ(split("a b", ' '), (std::vector<std::string_view>{"a", "b"}));
}

TEST(UtilTrimTest, Whitespace) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases = {
      {"x", "x"},  {"  x  ", "x"}, {"\t\nx y\r\n", "x y"}, {"", ""}, {" \t\r\n", ""},
      {"x ", "x"}, {" x", "x"},    {"a  b", "a  b"},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(trim(in), want) << '"' << in << '"';
}

TEST(UtilParseIdListTest, Lists) {
  const std::vector<std::pair<std::string_view, std::optional<std::vector<int>>>> cases = {
      {"185,186", std::vector<int>{185, 186}},
      {"1", std::vector<int>{1}},
      {" 1 , 2 ", std::vector<int>{1, 2}},
      {"", std::nullopt},
      {"0", std::nullopt},
      {"-1", std::nullopt},
      {"1,,2", std::nullopt},
      {"1,", std::nullopt},
      {"1,x", std::nullopt},
      {"1.5", std::nullopt},
      {"99999999999", std::nullopt},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(parse_id_list(in), want) << '"' << in << '"';
}

TEST(UtilParseCpuListTest, Lists) {
  const std::vector<std::pair<std::string_view, std::optional<std::vector<int>>>> cases = {
      {"0-3,5", std::vector<int>{0, 1, 2, 3, 5}},
      {"0", std::vector<int>{0}},
      {"1-1", std::vector<int>{1}},
      {"0-1,4-5", std::vector<int>{0, 1, 4, 5}},
      {"0-1\n", std::vector<int>{0, 1}},  // as read from /sys
      {"", std::vector<int>{}},           // no CPUs, not an error
      {"3-1", std::nullopt},
      {"a", std::nullopt},
      {"0-", std::nullopt},
      {"-1", std::nullopt},
      {"0,,1", std::nullopt},
      {"0-x", std::nullopt},
      // Found by tests/fuzz/strings_fuzz.cpp: ranges were expanded whatever
      // their size (200 million ints here; "0-2147483647" also overflowed).
      {"1474834-214748348", std::nullopt},
      {"0-2147483647", std::nullopt},
      {"65536", std::nullopt},
      {"65534-65535", std::vector<int>{65534, 65535}},
  };
  for (const auto& [in, want] : cases) EXPECT_EQ(parse_cpu_list(in), want) << '"' << in << '"';
}

TEST(UtilReadFileTest, ReadsWholeFile) {
  char path[] = "/tmp/tracekit_strings_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  const std::string content("line one\nline two\n\0binary", 25);
  ASSERT_EQ(write(fd, content.data(), content.size()), static_cast<ssize_t>(content.size()));
  close(fd);
  auto r = read_file(path);
  unlink(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, content);
}

TEST(UtilReadFileTest, MissingFileCarriesErrnoAndPath) {
  auto r = read_file("/nonexistent/tracekit/file");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().err, ENOENT);
  EXPECT_EQ(r.error().path, "/nonexistent/tracekit/file");
}

TEST(UtilUtf8Test, Characters) {
  auto u = utf8_char("a");
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.size, 1u);
  EXPECT_EQ(u.code, U'a');
  u = utf8_char("\xc3\xa9x");
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.size, 2u);
  EXPECT_EQ(u.code, U'\u00e9');
  u = utf8_char("\xef\xbf\xbf");
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.code, 0xffffu);
  u = utf8_char("\xf0\x9f\x94\xa5");
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.size, 4u);
  EXPECT_EQ(u.code, 0x1f525u);
  // Not valid: the maximal subpart's length.
  EXPECT_FALSE(utf8_char("\x80").valid);
  EXPECT_EQ(utf8_char("\xc0\xaf").size, 1u);     // overlong
  EXPECT_EQ(utf8_char("\xed\xa0\x80").size, 1u);  // a surrogate
  EXPECT_EQ(utf8_char("\xe2\x82").size, 2u);      // cut short
  EXPECT_FALSE(utf8_char("\xe2\x82").valid);
  EXPECT_EQ(utf8_char("\xf4\x90\x80\x80").size, 1u);  // above U+10FFFF
  EXPECT_EQ(utf8_char("\xff").size, 1u);
}

// Control characters (C0, DEL, C1 as UTF-8 or as a lone byte) are escaped;
// everything else is kept.
TEST(UtilPrintableTest, QuestionMarks) {
  EXPECT_EQ(printable("plain text, ~ and all"), "plain text, ~ and all");
  EXPECT_TRUE(is_printable("plain"));
  EXPECT_EQ(printable(std::string_view("a\0b\tc\nd\re\x1b[2Jf\x7f", 15)), "a?b?c?d?e?[2Jf?");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\xa5"), "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\xa5");
  EXPECT_TRUE(is_printable("caf\xc3\xa9"));
  EXPECT_EQ(printable("\xc2\x9b" "31m\xc2\x85"), "?31m?");  // CSI, NEL as UTF-8
  EXPECT_EQ(printable("\x9b" "31m"), "?31m");                // CSI as one byte
  EXPECT_EQ(printable("\xc2\xa0"), "\xc2\xa0");              // U+00A0 is not C1
  EXPECT_EQ(printable("latin1 caf\xe9"), "latin1 caf\xe9");  // ill-formed but not C1
  EXPECT_EQ(printable("\xe2\x9b"), "\xe2?");  // a broken sequence: its C1 byte alone
  EXPECT_FALSE(is_printable("\x9b"));
  EXPECT_FALSE(is_printable("\n"));
  std::string out = "kept ";
  append_printable(out, "x\ny");
  EXPECT_EQ(out, "kept x?y");
}

// cat -v's notation: ^[ for ESC, ^? for DEL, M-^[ for CSI; newline and tab
// too.
TEST(UtilPrintableTest, Caret) {
  EXPECT_EQ(printable(std::string_view("a\0b\tc\nd\x1b[2Je\x7f\x1f", 14), ControlForm::kCaret),
            "a^@b^Ic^Jd^[[2Je^?^_");
  EXPECT_EQ(printable("\xc2\x9b" "1m\x9b\xc3\xa9", ControlForm::kCaret), "M-^[1mM-^[\xc3\xa9");
  EXPECT_EQ(printable("ls -l /etc", ControlForm::kCaret), "ls -l /etc");
}

}  // namespace
}  // namespace tracekit
