// How this works: both renderers walk a record in bcc's order and differ only
// in direction and joining. Multi-line prints each side leaf first, one frame
// per line; folded prints the user side then the kernel side, each root
// first, joined by ';'. A side is printed only when it was collected
// (kPresent: its frames; kMissed: bcc's marker), and the delimiter only when
// both sides were actually walked, so -K/-U output and lost stacks never get a
// dangling "--" or "-" (bcc: "k.user_stack_id >= 0 and k.kernel_stack_id >= 0").
//
// Names come from the kernel and from ELF files and may hold any byte; comm
// can be set to anything with prctl(PR_SET_NAME). Two rules keep the line
// structure intact:
//   - everywhere: control characters (newline, tab, ESC, C1 controls, ...)
//     print as '?' (printable(), util/strings.hpp), so one frame is always
//     one line and no name reaches the terminal as an escape sequence;
//   - folded only: ';' prints as ':', since ';' separates frames. Spaces are
//     kept, as stackcollapse-perf.pl keeps them (C++ names like
//     "f(int, char)"): flamegraph.pl takes the count after the LAST space, so
//     spaces inside names are safe.

#include "output/stack_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_map>

#include "util/strings.hpp"

namespace tracekit::output {

namespace {

bool both_present(const report::Record& r) {
  return r.kernel.state == report::StackState::kPresent &&
         r.user.state == report::StackState::kPresent;
}

// Appends one side's lines to text.
void write_side(std::string& text, const report::Stack& stack, const report::FrameTable& frames,
                bool kernel, const report::Style& style, const std::string& pad) {
  switch (stack.state) {
    case report::StackState::kAbsent:
      return;
    case report::StackState::kMissed:
      text += pad;
      text += kernel ? style.missed_kernel : style.missed_user;
      text += '\n';
      return;
    case report::StackState::kPresent:
      for (const report::Frame& f : frames.frames(stack)) {
        text += pad;
        if (style.addresses) {
          char addr[32];
          std::snprintf(addr, sizeof addr, "%-16" PRIx64 " ", f.addr);
          text += addr;
        }
        append_frame_text(text, f, kernel, style);
        text += '\n';
      }
      return;
  }
}

// Appends one side, root first.
void fold_side(std::string& text, std::vector<FoldedSpan>& spans, const report::Stack& stack,
               const report::FrameTable& frames, bool kernel, const report::Style& style) {
  FrameKind kind = kernel ? FrameKind::kKernel : FrameKind::kUser;
  auto at = [&] { return static_cast<uint32_t>(text.size()); };
  switch (stack.state) {
    case report::StackState::kAbsent:
      return;
    case report::StackState::kMissed: {
      uint32_t from = at();
      append_printable(text, kernel ? style.missed_kernel : style.missed_user);
      spans.push_back({from, at() - from, kind, nullptr});
      return;
    }
    case report::StackState::kPresent:
      for (const report::Frame& f : frames.frames(stack) | std::views::reverse) {
        uint32_t from = at();
        append_frame_text(text, f, kernel, style);
        spans.push_back({from, at() - from, kind, &f});
      }
      return;
  }
}

}  // namespace

void append_frame_text(std::string& out, const report::Frame& f, bool kernel,
                       const report::Style& style) {
  if (f.name.empty()) {
    out += "[unknown]";
  } else {
    append_printable(out, f.name);
  }
  // An offset from nothing means nothing, but an unknown kernel frame is
  // still annotated (bcc: ksym() + "_[k]"), so flame graphs colour it kernel.
  if (style.offsets && !f.name.empty()) {
    char off[24];
    std::snprintf(off, sizeof off, "+0x%" PRIx64, f.offset);
    out += off;
  }
  if (kernel && style.annotate_kernel) out += "_[k]";
}

std::string frame_text(const report::Frame& f, bool kernel, const report::Style& style) {
  std::string s;
  append_frame_text(s, f, kernel, style);
  return s;
}

namespace {

// The text a record prints as, less its value, is the grouping key of
// merge_same_text(). It is never built: a record's hash covers exactly the
// pieces that text is made of (comm, pid, stack states, frame texts), and
// only records whose hashes agree are compared, piece by piece.

// FNV-1a over the bytes as printed (printable()).
uint64_t hash_text(uint64_t h, std::string_view s) {
  std::string shown;
  if (!is_printable(s)) s = shown = printable(s);
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}
uint64_t hash_word(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0x100000001b3ULL;
}

std::string_view shown_name(const report::Frame& f) {
  return f.name.empty() ? std::string_view("[unknown]") : std::string_view(f.name);
}

// A frame's text as printed, hashed: the same for frames that print the
// same. Computed once per frame of the table, not once per stack holding it.
uint64_t frame_hash(const report::Frame& f, const report::Style& style) {
  uint64_t h = hash_text(0xcbf29ce484222325ULL, shown_name(f));
  if (style.offsets && !f.name.empty()) h = hash_word(h, f.offset);
  if (style.addresses) h = hash_word(h, f.addr);
  return h;
}

// frame_hashes: frame_hash() of each frame of the table, by id.
uint64_t text_hash(const report::Record& r, const report::FrameTable& frames,
                   const std::vector<uint64_t>& frame_hashes) {
  uint64_t h = hash_text(0xcbf29ce484222325ULL, r.comm);
  h = hash_word(h, static_cast<uint64_t>(r.pid));
  for (const report::Stack* side : {&r.kernel, &r.user}) {
    h = hash_word(h, static_cast<uint64_t>(side->state) + 16 * side->size);
    for (report::FrameTable::Id id : frames.ids(*side)) h = hash_word(h, frame_hashes[id]);
  }
  return h;
}

bool same_printed(std::string_view a, std::string_view b) {
  if (a == b) return true;
  return !(is_printable(a) && is_printable(b)) && printable(a) == printable(b);
}

// Whether a and b print the same text under style (their values aside).
bool same_text(const report::Record& a, const report::Record& b, const report::FrameTable& frames,
               const report::Style& style) {
  if (a.pid != b.pid || !same_printed(a.comm, b.comm)) return false;
  const report::Stack* sa[] = {&a.kernel, &a.user};
  const report::Stack* sb[] = {&b.kernel, &b.user};
  for (int k = 0; k < 2; ++k) {
    if (sa[k]->state != sb[k]->state || sa[k]->size != sb[k]->size) return false;
    std::span<const report::FrameTable::Id> ia = frames.ids(*sa[k]), ib = frames.ids(*sb[k]);
    for (size_t i = 0; i < ia.size(); ++i) {
      if (ia[i] == ib[i]) continue;  // the same frame prints the same
      const report::Frame& x = frames[ia[i]];
      const report::Frame& y = frames[ib[i]];
      if (style.addresses && x.addr != y.addr) return false;
      if (!same_printed(shown_name(x), shown_name(y))) return false;
      // An offset prints after a resolved name only ("[unknown]" has none).
      if (style.offsets && (!x.name.empty() || !y.name.empty()) &&
          (x.name.empty() != y.name.empty() || x.offset != y.offset))
        return false;
    }
  }
  return true;
}

}  // namespace

void merge_same_text(std::vector<report::Record>& records, const report::FrameTable& frames,
                     const report::Style& style) {
  // hash -> the first kept record with it; others with the same hash chain
  // through next (by kept index).
  constexpr uint32_t kEnd = UINT32_MAX;
  std::unordered_map<uint64_t, uint32_t> first;
  first.reserve(records.size());
  std::vector<uint32_t> next;
  next.reserve(records.size());
  std::vector<uint64_t> frame_hashes(frames.size());
  for (report::FrameTable::Id id = 0; id < frames.size(); ++id)
    frame_hashes[id] = frame_hash(frames[id], style);
  size_t kept = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    report::Record& r = records[i];
    auto [it, added] =
        first.try_emplace(text_hash(r, frames, frame_hashes), static_cast<uint32_t>(kept));
    if (!added) {
      uint32_t j = it->second;
      while (!same_text(records[j], r, frames, style) && next[j] != kEnd) j = next[j];
      if (same_text(records[j], r, frames, style)) {
        records[j].value += r.value;
        continue;
      }
      next[j] = static_cast<uint32_t>(kept);
    }
    // Kept: moved down to its place, so kept records stay in first-seen order.
    if (kept != i) records[kept] = std::move(r);
    next.push_back(kEnd);
    ++kept;
  }
  records.resize(kept);
}

void sort_by_value(std::vector<report::Record>& records) {
  std::stable_sort(
      records.begin(), records.end(),
      [](const report::Record& a, const report::Record& b) { return a.value < b.value; });
}

void render_multiline(std::ostream& out, const std::vector<report::Record>& records,
                      const report::FrameTable& frames, const report::Style& style) {
  const std::string pad(std::max(style.frame_indent, 0), ' ');
  // bcc puts the value at twice the frame indent: 8 under profile's 4-space
  // frames, 4 under stackcount's 2-space ones.
  const std::string value_pad(2 * pad.size(), ' ');
  // One write per record: a stream insertion per piece cost more than
  // making the text.
  std::string text;
  for (const report::Record& r : records) {
    text.clear();
    write_side(text, r.kernel, frames, true, style, pad);
    // bcc prints "    --" in every tool, whatever its frame indent.
    if (style.delimiter && both_present(r)) text += "    --\n";
    write_side(text, r.user, frames, false, style, pad);
    if (style.process_line && style.bracketed_process) {
      text += value_pad + printable(r.comm) + " [" + std::to_string(r.pid) + "]\n";
    } else if (style.process_line) {
      char dash[20];
      std::snprintf(dash, sizeof dash, "%-16s ", "-");
      text += pad + dash + printable(r.comm) + " (" + std::to_string(r.pid) + ")\n";
    }
    text += value_pad + std::to_string(r.value) + "\n\n";
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
}

void folded_frames(const report::Record& r, const report::FrameTable& frames,
                   const report::Style& style, std::string& text, std::vector<FoldedSpan>& spans) {
  text.clear();
  spans.clear();
  if (style.folded_comm) {
    append_printable(text, r.comm);
    spans.push_back({0, static_cast<uint32_t>(text.size()), FrameKind::kProcess, nullptr});
  }
  fold_side(text, spans, r.user, frames, false, style);
  if (style.delimiter && both_present(r)) {
    spans.push_back({static_cast<uint32_t>(text.size()), 1, FrameKind::kDelimiter, nullptr});
    text += '-';
  }
  fold_side(text, spans, r.kernel, frames, true, style);
}

std::vector<FoldedFrame> folded_frames(const report::Record& r, const report::FrameTable& frames,
                                       const report::Style& style) {
  std::string text;
  std::vector<FoldedSpan> spans;
  folded_frames(r, frames, style, text, spans);
  std::vector<FoldedFrame> parts;
  parts.reserve(spans.size());
  for (const FoldedSpan& s : spans) parts.push_back({text.substr(s.at, s.size), s.kind, s.frame});
  return parts;
}

void render_folded(std::ostream& out, const std::vector<report::Record>& records,
                   const report::FrameTable& frames, const report::Style& style) {
  std::string line, text;
  std::vector<FoldedSpan> spans;
  for (const report::Record& r : records) {
    folded_frames(r, frames, style, text, spans);
    line.clear();
    for (const FoldedSpan& s : spans) {
      if (&s != &spans.front()) line += ';';
      size_t at = line.size();
      line.append(text, s.at, s.size);
      std::replace(line.begin() + static_cast<std::ptrdiff_t>(at), line.end(), ';', ':');
    }
    out << line << ' ' << r.value << '\n';
  }
}

}  // namespace tracekit::output
