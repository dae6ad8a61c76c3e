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
//   - everywhere: control characters (newline, tab, ...) print as '?', so one
//     frame is always one line;
//   - folded only: ';' prints as ':', since ';' separates frames. Spaces are
//     kept, as stackcollapse-perf.pl keeps them (C++ names like
//     "f(int, char)"): flamegraph.pl takes the count after the LAST space, so
//     spaces inside names are safe.

#include "output/stack_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <unordered_map>

namespace tracekit::output {

namespace {

std::string printable(std::string s) {
  for (char& c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return s;
}

bool both_present(const Record& r) {
  return r.kernel.state == StackState::kPresent && r.user.state == StackState::kPresent;
}

void write_side(std::ostream& out, const Stack& stack, bool kernel, const Style& style,
                const std::string& pad) {
  switch (stack.state) {
    case StackState::kAbsent:
      return;
    case StackState::kMissed:
      out << pad << (kernel ? style.missed_kernel : style.missed_user) << '\n';
      return;
    case StackState::kPresent:
      for (const Frame& f : stack.frames) {
        out << pad;
        if (style.addresses) {
          char addr[32];
          std::snprintf(addr, sizeof addr, "%-16" PRIx64 " ", f.addr);
          out << addr;
        }
        out << frame_text(f, kernel, style) << '\n';
      }
      return;
  }
}

// Appends one side, root first.
void fold_side(std::vector<FoldedFrame>& parts, const Stack& stack, bool kernel,
               const Style& style) {
  FrameKind kind = kernel ? FrameKind::kKernel : FrameKind::kUser;
  switch (stack.state) {
    case StackState::kAbsent:
      return;
    case StackState::kMissed:
      parts.push_back({printable(kernel ? style.missed_kernel : style.missed_user), kind});
      return;
    case StackState::kPresent:
      for (auto it = stack.frames.rbegin(); it != stack.frames.rend(); ++it)
        parts.push_back({frame_text(*it, kernel, style), kind, &*it});
      return;
  }
}

}  // namespace

std::string frame_text(const Frame& f, bool kernel, const Style& style) {
  std::string s = f.name.empty() ? "[unknown]" : printable(f.name);
  // An offset from nothing means nothing, but an unknown kernel frame is
  // still annotated (bcc: ksym() + "_[k]"), so flame graphs colour it kernel.
  if (style.offsets && !f.name.empty()) {
    char off[24];
    std::snprintf(off, sizeof off, "+0x%" PRIx64, f.offset);
    s += off;
  }
  if (kernel && style.annotate_kernel) s += "_[k]";
  return s;
}

namespace {

// The text a record prints as, less its value: the grouping key of
// merge_same_text().
std::string text_key(const Record& r, const Style& style) {
  std::string key = r.comm;
  key += '\0' + std::to_string(r.pid);
  for (const Stack* side : {&r.kernel, &r.user}) {
    key += '\0' + std::to_string(static_cast<int>(side->state));
    for (const Frame& f : side->frames) {
      key += '\n';
      if (style.addresses) key += std::to_string(f.addr) + ' ';
      key += frame_text(f, side == &r.kernel, style);
    }
  }
  return key;
}

}  // namespace

void merge_same_text(std::vector<Record>& records, const Style& style) {
  std::unordered_map<std::string, size_t> first;  // key -> index in merged
  std::vector<Record> merged;
  merged.reserve(records.size());
  for (Record& r : records) {
    auto [it, added] = first.emplace(text_key(r, style), merged.size());
    if (added)
      merged.push_back(std::move(r));
    else
      merged[it->second].value += r.value;
  }
  records = std::move(merged);
}

void sort_by_value(std::vector<Record>& records) {
  std::stable_sort(records.begin(), records.end(),
                   [](const Record& a, const Record& b) { return a.value < b.value; });
}

void render_multiline(std::ostream& out, const std::vector<Record>& records, const Style& style) {
  const std::string pad(std::max(style.frame_indent, 0), ' ');
  // bcc puts the value at twice the frame indent: 8 under profile's 4-space
  // frames, 4 under stackcount's 2-space ones.
  const std::string value_pad(2 * pad.size(), ' ');
  for (const Record& r : records) {
    write_side(out, r.kernel, true, style, pad);
    // bcc prints "    --" in every tool, whatever its frame indent.
    if (style.delimiter && both_present(r)) out << "    --\n";
    write_side(out, r.user, false, style, pad);
    if (style.process_line && style.bracketed_process) {
      out << value_pad << printable(r.comm) << " [" << r.pid << "]\n";
    } else if (style.process_line) {
      char dash[20];
      std::snprintf(dash, sizeof dash, "%-16s ", "-");
      out << pad << dash << printable(r.comm) << " (" << r.pid << ")\n";
    }
    out << value_pad << r.value << "\n\n";
  }
}

std::vector<FoldedFrame> folded_frames(const Record& r, const Style& style) {
  std::vector<FoldedFrame> parts;
  parts.reserve(1 + r.user.frames.size() + 1 + r.kernel.frames.size());
  if (style.folded_comm) parts.push_back({printable(r.comm), FrameKind::kProcess});
  fold_side(parts, r.user, false, style);
  if (style.delimiter && both_present(r)) parts.push_back({"-", FrameKind::kDelimiter});
  fold_side(parts, r.kernel, true, style);
  return parts;
}

void render_folded(std::ostream& out, const std::vector<Record>& records, const Style& style) {
  std::string line;
  for (const Record& r : records) {
    line.clear();
    bool first = true;
    for (const FoldedFrame& f : folded_frames(r, style)) {
      if (!first) line += ';';
      first = false;
      size_t at = line.size();
      line += f.text;
      std::replace(line.begin() + static_cast<std::ptrdiff_t>(at), line.end(), ';', ':');
    }
    out << line << ' ' << r.value << '\n';
  }
}

}  // namespace tracekit::output
