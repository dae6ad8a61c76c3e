// Small text helpers shared by every concern: number parsing that rejects
// junk (std::from_chars, whole string), splitting, whole-file reads, UTF-8
// decoding, and text made safe for a terminal.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit {

// Parses all of s as a decimal integer of type T. nullopt on empty input,
// trailing junk, a sign where T is unsigned, or overflow.
template <class T>
std::optional<T> parse_int(std::string_view s) {
  T v{};
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Parses all of s as an integer of type T in base 16, with or without "0x".
template <class T>
std::optional<T> parse_hex(std::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  T v{};
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Splits s at every sep; empty fields are kept ("a,,b" -> {"a","","b"}).
std::vector<std::string_view> split(std::string_view s, char sep);

// The strings with sep between them ("a, b, c" for sep ", ").
std::string join(const std::vector<std::string>& v, std::string_view sep = ", ");

// s without leading and trailing spaces, tabs and newlines.
std::string_view trim(std::string_view s);

// What an error message echoes of user input: s when it has max bytes at
// most, else its first max bytes (not cutting a UTF-8 character) and "...",
// so that a 100 KB filter or argument does not bury the message; its
// control characters print as '?' (printable()).
inline constexpr size_t kMaxEchoed = 64;
std::string elide(std::string_view s, size_t max = kMaxEchoed);

// "185,186" -> {185,186}. nullopt when any field is not a positive integer.
std::optional<std::vector<int>> parse_id_list(std::string_view s);

// Kernel CPU list syntax ("0-3,5", as in /sys/devices/system/cpu/online).
// nullopt on malformed input, and for a CPU number of kMaxCpu or more (the
// kernel's NR_CPUS is at most 8192).
inline constexpr int kMaxCpu = 1 << 16;
std::optional<std::vector<int>> parse_cpu_list(std::string_view s);

// The whole content of a (usually /proc or /sys) file. Error carries errno
// and the path.
Result<std::string> read_file(const std::string& path);

// One UTF-8 character at the start of s (s not empty), by Unicode's table
// 3-7: no overlong forms, no surrogates, nothing above U+10FFFF. Valid: size
// is the sequence's length and code its code point. Not valid: size is the
// length of the maximal subpart (the bytes read before the one that broke
// it, at least 1), which a decoder replaces with one U+FFFD. A byte below
// 0x80 is a valid character of size 1.
struct Utf8Char {
  size_t size = 1;
  char32_t code = 0;
  bool valid = false;
};
Utf8Char utf8_char(std::string_view s);

// How printable() shows a control character.
enum class ControlForm {
  // '?', one per character (bcc's tools, the stack tools' reports).
  kQuestionMark,
  // cat -v's caret notation, which perf-tools' execsnoop pipes the trace
  // through: "^[" for ESC, "^J" for a newline, "^?" for DEL, "M-^[" for the
  // C1 control U+009B. Unlike cat -v, newlines and tabs are escaped too (a
  // newline would start a forged line), and other bytes at or above 0x80
  // print as they are.
  kCaret,
};

// Appends s to out with every control character escaped, so that the text
// holds no escape sequence a terminal would act on and no line break: the
// C0 controls (0x00-0x1f, tab and newline too), DEL, and the C1 controls
// (U+0080-U+009F: as two-byte UTF-8, or as a lone byte outside any UTF-8
// sequence, which 8-bit terminals take as C1). Every other byte is kept:
// UTF-8 names print as they are, and so do ill-formed bytes at or above
// 0xa0, which a UTF-8 terminal shows as a replacement glyph. Text of
// printable ASCII is copied unchanged.
void append_printable(std::string& out, std::string_view s,
                      ControlForm form = ControlForm::kQuestionMark);
std::string printable(std::string_view s, ControlForm form = ControlForm::kQuestionMark);
// Whether printable(s) is s.
bool is_printable(std::string_view s);

}  // namespace tracekit
