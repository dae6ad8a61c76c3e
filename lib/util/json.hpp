// JSON text: the one string escaper every JSON writer uses (the speedscope
// file, the JSON report, `tracekit features --json`).
//
// Names reach us from the kernel, from ELF symbol tables and from comm, which
// prctl(PR_SET_NAME) sets to any bytes, so the input is not always UTF-8,
// while JSON text must be. The escaper writes:
//   - '"' and '\' as \" and \\;
//   - control characters (0x00-0x1f) and DEL (0x7f) as \u00XX, lower-case
//     hex, so that one name never spans lines;
//   - well-formed UTF-8 sequences as they are;
//   - every ill-formed sequence as U+FFFD (the replacement character, written
//     as its UTF-8 bytes), one for each maximal subpart, the Unicode standard's
//     recommended practice, which is also what browsers' TextDecoder and
//     Python's errors="replace" do, so a name reads the same here as in a
//     viewer that decodes the raw bytes itself. Latin-1 (\u00XX for each
//     byte) was not chosen: it would turn a truncated UTF-8 name into
//     plausible-looking but wrong letters instead of a visible mark.
#pragma once

#include <string>
#include <string_view>

namespace tracekit {

// Appends s to out as a JSON string literal, quotes included. Never fails.
void append_json_string(std::string& out, std::string_view s);

// s as a JSON string literal, quotes included.
std::string json_string(std::string_view s);

}  // namespace tracekit
