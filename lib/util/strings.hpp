// Small text helpers shared by every concern: number parsing that rejects
// junk (std::from_chars, whole string), splitting, whole-file reads.
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

// s without leading and trailing spaces, tabs and newlines.
std::string_view trim(std::string_view s);

// What an error message echoes of user input: s when it has max bytes at
// most, else its first max bytes (not cutting a UTF-8 character) and "...",
// so that a 100 KB filter or argument does not bury the message.
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

}  // namespace tracekit
