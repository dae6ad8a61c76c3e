#include "util/json.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit {
namespace {

struct EscapeCase {
  std::string in;
  std::string want;  // the literal, quotes included
};

std::string bytes(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    char buf[8];
    std::snprintf(buf, sizeof buf, c < 0x20 || c >= 0x7f ? "\\x%02x" : "%c", c);
    out += buf;
  }
  return out;
}

const std::string kFffd = "\xef\xbf\xbd";  // U+FFFD as UTF-8

TEST(UtilJsonStringTest, Ascii) {
  const std::vector<EscapeCase> cases = {
      {"", R"("")"},
      {"func_b", R"("func_b")"},
      {"ns::f<int>(int, char const*)", R"j("ns::f<int>(int, char const*)")j"},
      {"a<b>&\"c\"", R"("a<b>&\"c\"")"},
      {"x;y", R"("x;y")"},
      {"C:\\path", R"("C:\\path")"},
      {"/", R"("/")"},  // '/' needs no escape
      {"\n", R"("\u000a")"},
      {"a\tb\rc", R"("a\u0009b\u000dc")"},
      {std::string("a\0b", 3), R"("a\u0000b")"},
      {"\x01\x1f\x20\x7e\x7f", R"("\u0001\u001f ~\u007f")"},
      {"\x1b[31mred", R"("\u001b[31mred")"},
  };
  for (const auto& c : cases) EXPECT_EQ(json_string(c.in), c.want) << bytes(c.in);
}

TEST(UtilJsonStringTest, WellFormedUtf8Kept) {
  const std::vector<std::string> cases = {
      "caf\xc3\xa9",                  // U+00E9
      "\xc2\x80",                     // U+0080, the first 2-byte
      "\xdf\xbf",                     // U+07FF
      "\xe0\xa0\x80",                 // U+0800, the first 3-byte
      "\xe2\x82\xac",                 // U+20AC
      "\xed\x9f\xbf",                 // U+D7FF, below the surrogates
      "\xee\x80\x80",                 // U+E000, above them
      "\xef\xbf\xbd",                 // U+FFFD itself
      "\xf0\x90\x80\x80",             // U+10000, the first 4-byte
      "\xf0\x9f\x98\x80",             // U+1F600
      "\xf4\x8f\xbf\xbf",             // U+10FFFF, the last
      "\xe6\x97\xa5\xe6\x9c\xac-ok",  // two CJK letters
  };
  for (const auto& s : cases) EXPECT_EQ(json_string(s), '"' + s + '"') << bytes(s);
}

// Ill-formed input: one U+FFFD per maximal subpart (Unicode 15, section 3.9,
// "U+FFFD Substitution of Maximal Subparts"), as TextDecoder does.
TEST(UtilJsonStringTest, IllFormedUtf8Replaced) {
  const std::string r = kFffd;
  const std::vector<EscapeCase> cases = {
      {"\x80", '"' + r + '"'},                      // lone continuation byte
      {"\xbf\x80", '"' + r + r + '"'},              // two of them
      {"caf\xe9", "\"caf" + r + '"'},               // Latin-1 é
      {"caf\xe9!", "\"caf" + r + "!\""},            // ... with a byte after it
      {"\xc0\xaf", '"' + r + r + '"'},              // overlong '/': C0 never leads
      {"\xc1\xbf", '"' + r + r + '"'},
      {"\xe0\x80\x80", '"' + r + r + r + '"'},      // overlong 3-byte
      {"\xed\xa0\x80", '"' + r + r + r + '"'},      // a surrogate (U+D800)
      {"\xf0\x80\x80\x80", '"' + r + r + r + r + '"'},  // overlong 4-byte
      {"\xf4\x90\x80\x80", '"' + r + r + r + r + '"'},  // above U+10FFFF
      {"\xf5\x80", '"' + r + r + '"'},              // F5..FF never lead
      {"\xff\xfe", '"' + r + r + '"'},
      {"\xe2\x82", '"' + r + '"'},                  // truncated at the end: one
      {"\xe2\x82x", '"' + r + "x\""},               // truncated before ASCII
      {"\xe2\x82\xe2\x82\xac", '"' + r + "\xe2\x82\xac\""},  // before a whole one
      {"\xf0\x9f\x98", '"' + r + '"'},
      {"\xf0\x9f\x98\"", '"' + r + "\\\"\""},       // the quote still escaped
      {"\xc3\n", '"' + r + "\\u000a\""},            // ... and the control char
  };
  for (const auto& c : cases) EXPECT_EQ(json_string(c.in), c.want) << bytes(c.in);
}

TEST(UtilJsonStringTest, AppendsToWhatIsThere) {
  std::string out = "[";
  append_json_string(out, "a");
  out += ", ";
  append_json_string(out, "b\"");
  EXPECT_EQ(out, R"(["a", "b\"")");
}

}  // namespace
}  // namespace tracekit
