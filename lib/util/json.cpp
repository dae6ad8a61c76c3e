// How this works: bytes below 0x80 are escaped or copied one at a time; a
// byte at or above 0x80 starts a UTF-8 sequence whose length and allowed
// second byte its value fixes (Unicode's table 3-7: no overlong forms, no
// surrogates, nothing above U+10FFFF). The sequence is copied when every byte
// is as the table says; otherwise the bytes read so far (the maximal subpart)
// become one U+FFFD and scanning resumes at the byte that broke it.
#include "util/json.hpp"

#include <cstddef>
#include <cstdint>

namespace tracekit {

namespace {

constexpr char kHex[] = "0123456789abcdef";
constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD

// The length of the UTF-8 sequence that lead starts, and the range its second
// byte must fall in; length 0: lead never starts a sequence.
struct Lead {
  int length;
  uint8_t low, high;
};

Lead lead_of(uint8_t b) {
  if (b >= 0xc2 && b <= 0xdf) return {2, 0x80, 0xbf};
  if (b == 0xe0) return {3, 0xa0, 0xbf};  // no overlong 3-byte forms
  if (b == 0xed) return {3, 0x80, 0x9f};  // no surrogates
  if (b >= 0xe1 && b <= 0xef) return {3, 0x80, 0xbf};
  if (b == 0xf0) return {4, 0x90, 0xbf};  // no overlong 4-byte forms
  if (b >= 0xf1 && b <= 0xf3) return {4, 0x80, 0xbf};
  if (b == 0xf4) return {4, 0x80, 0x8f};  // nothing above U+10FFFF
  return {0, 0, 0};  // 0x80-0xc1 (continuation, overlong 2-byte), 0xf5-0xff
}

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
    Lead lead = lead_of(b);
    size_t n = 1;  // bytes of the sequence that are as they should be
    if (lead.length > 0) {
      for (; n < static_cast<size_t>(lead.length) && i + n < s.size(); ++n) {
        auto c = static_cast<uint8_t>(s[i + n]);
        uint8_t low = n == 1 ? lead.low : 0x80;
        uint8_t high = n == 1 ? lead.high : 0xbf;
        if (c < low || c > high) break;
      }
    }
    if (lead.length > 0 && n == static_cast<size_t>(lead.length))
      out.append(s.substr(i, n));
    else
      out += kReplacement;
    i += n;
  }
  out += '"';
}

std::string json_string(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

}  // namespace tracekit
