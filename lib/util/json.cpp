// How this works: bytes below 0x80 are escaped or copied one at a time; a
// byte at or above 0x80 starts a UTF-8 sequence (utf8_char(), Unicode's
// table 3-7). The sequence is copied when it is well-formed; otherwise the
// bytes read so far (the maximal subpart) become one U+FFFD and scanning
// resumes at the byte that broke it.
#include "util/json.hpp"

#include <cstddef>
#include <cstdint>

#include "util/strings.hpp"

namespace tracekit {

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

}  // namespace

void append_json_string(std::string& out, std::string_view s) {
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  size_t i = 0;
  while (i < s.size()) {
    auto b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      if (b == '"' || b == '\\') {
        out += '\\';
        out += static_cast<char>(b);
      } else if (b < 0x20 || b == 0x7f) {
        out += "\\u00";
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
      } else {
        out += static_cast<char>(b);
      }
      ++i;
      continue;
    }
    Utf8Char u = utf8_char(s.substr(i));
    if (u.valid)
      out.append(s.substr(i, u.size));
    else
      out += kReplacement;
    i += u.size;
  }
  out += '"';
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace tracekit
