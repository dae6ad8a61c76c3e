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

std::string_view trim(std::string_view s) {
  constexpr std::string_view ws = " \t\n\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::string elide(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  // Back to the start of the character that byte n is in (10xxxxxx bytes
  // continue one).
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "...";
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

}  // namespace tracekit
