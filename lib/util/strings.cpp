#include "util/strings.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace tracekit {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (;;) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += sep;
    s += v[i];
  }
  return s;
}

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::string elide(std::string_view s, size_t max) {
  if (s.size() <= max) return printable(s);
  size_t n = max;
  // Back to the start of the character that byte n is in (10xxxxxx bytes
  // continue one).
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return printable(s.substr(0, n)) + "...";
}

std::optional<std::vector<int>> parse_id_list(std::string_view s) {
  std::vector<int> ids;
  for (auto field : split(s, ',')) {
    auto v = parse_int<int>(trim(field));
    if (!v || *v <= 0) return std::nullopt;
    ids.push_back(*v);
  }
  return ids;
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view s) {
  std::vector<int> cpus;
  s = trim(s);
  if (s.empty()) return cpus;
  for (auto field : split(s, ',')) {
    auto dash = field.find('-');
    if (dash == std::string_view::npos) {
      auto v = parse_int<int>(field);
      if (!v || *v < 0 || *v >= kMaxCpu) return std::nullopt;
      cpus.push_back(*v);
    } else {
      auto lo = parse_int<int>(field.substr(0, dash));
      auto hi = parse_int<int>(field.substr(dash + 1));
      // Bounded: "0-2147483647" would fill gigabytes (and ++c overflow).
      if (!lo || !hi || *lo < 0 || *hi < *lo || *hi >= kMaxCpu) return std::nullopt;
      for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
    }
  }
  return cpus;
}

Result<std::string> read_file(const std::string& path) {
  // Large reads: a seq_file (/proc/kallsyms, available_filter_functions)
  // hands out at most what one read asks for, and on a slow machine every
  // read of a 5 MB file counts.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::from_errno("cannot open", path);
  std::string text;
  constexpr size_t kChunk = 128 * 1024;
  for (;;) {
    size_t have = text.size();
    text.resize(have + kChunk);
    ssize_t n = ::read(fd, text.data() + have, kChunk);
    if (n < 0 && errno == EINTR) {
      text.resize(have);
      continue;
    }
    if (n < 0) {
      Error e = Error::from_errno("cannot read", path);
      ::close(fd);
      return e;
    }
    text.resize(have + static_cast<size_t>(n));
    if (n == 0) break;
  }
  ::close(fd);
  return text;
}

Utf8Char utf8_char(std::string_view s) {
  const auto b = static_cast<uint8_t>(s[0]);
  if (b < 0x80) return {1, b, true};
  // The sequence's length and the range its second byte must fall in.
  size_t length = 0;
  uint8_t low = 0x80, high = 0xbf;
  char32_t code = 0;
  if (b >= 0xc2 && b <= 0xdf) {
    length = 2, code = b & 0x1f;
  } else if (b >= 0xe0 && b <= 0xef) {
    length = 3, code = b & 0x0f;
    if (b == 0xe0) low = 0xa0;   // no overlong 3-byte forms
    if (b == 0xed) high = 0x9f;  // no surrogates
  } else if (b >= 0xf0 && b <= 0xf4) {
    length = 4, code = b & 0x07;
    if (b == 0xf0) low = 0x90;   // no overlong 4-byte forms
    if (b == 0xf4) high = 0x8f;  // nothing above U+10FFFF
  } else {
    return {1, 0, false};  // 0x80-0xc1 (continuation, overlong 2-byte), 0xf5-0xff
  }
  size_t n = 1;
  for (; n < length && n < s.size(); ++n) {
    const auto c = static_cast<uint8_t>(s[n]);
    if (c < (n == 1 ? low : 0x80) || c > (n == 1 ? high : 0xbf)) break;
    code = code << 6 | (c & 0x3f);
  }
  if (n < length) return {n, 0, false};
  return {length, code, true};
}

namespace {

bool is_c0(uint8_t b) { return b < 0x20 || b == 0x7f; }
bool is_c1(char32_t c) { return c >= 0x80 && c <= 0x9f; }

void append_control(std::string& out, char32_t c, ControlForm form) {
  if (form == ControlForm::kQuestionMark) {
    out += '?';
    return;
  }
  if (c >= 0x80) {
    out += "M-";
    c -= 0x80;
  }
  out += '^';
  out += c == 0x7f ? '?' : static_cast<char>(c + 0x40);
}

}  // namespace

bool is_printable(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      if (is_c0(b)) return false;
      ++i;
      continue;
    }
    Utf8Char u = utf8_char(s.substr(i));
    if (u.valid ? is_c1(u.code) : b <= 0x9f) return false;
    i += u.valid ? u.size : 1;
  }
  return true;
}

void append_printable(std::string& out, std::string_view s, ControlForm form) {
  // Most text is printable ASCII: copied in one append.
  if (is_printable(s)) {
    out += s;
    return;
  }
  out.reserve(out.size() + s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      if (is_c0(b))
        append_control(out, b, form);
      else
        out += static_cast<char>(b);
      ++i;
      continue;
    }
    Utf8Char u = utf8_char(s.substr(i));
    if (u.valid) {
      if (is_c1(u.code))
        append_control(out, u.code, form);
      else
        out.append(s.substr(i, u.size));
      i += u.size;
    } else {
      // One byte at a time: what follows a broken sequence may start a
      // good one.
      if (b <= 0x9f)
        append_control(out, b, form);
      else
        out += static_cast<char>(b);
      ++i;
    }
  }
}

std::string printable(std::string_view s, ControlForm form) {
  std::string out;
  append_printable(out, s, form);
  return out;
}

}  // namespace tracekit
