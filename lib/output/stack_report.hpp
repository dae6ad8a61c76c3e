// Renderers for stack reports: bcc's multi-line format and the folded format
// of flame graphs. Input is resolved records (names already looked up) and
// the FrameTable their stacks' frames are in (the report model,
// report/report.hpp); output goes to any
// std::ostream, so every format is tested as text.
//
// Multi-line, one record (profile, offcputime):
//     kernel_leaf            <- frame_indent spaces, leaf first
//     kernel_root
//     --                     <- only with delimiter, when both sides present
//     user_leaf
//     user_root
//     -                comm (pid)     <- "%-16s %s (%d)" after the indent
//         5                  <- value, at twice frame_indent (bcc: 8 under
//     <blank line>              profile's 4, 4 under stackcount's 2)
//
// Folded, one line per record:
//   comm;user_root;...;user_leaf;-;kernel_root;...;kernel_leaf VALUE
//
// Missed markers and "--" use frame_indent. Names are printed as they are,
// except that control characters (newline, tab, ...) become '?' in both
// formats, and ';' becomes ':' in folded output (it separates frames there);
// spaces are kept, since flame graph tools read the count after the last one.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "report/report.hpp"

namespace tracekit::output {

// Sorts records by value, ascending (stable: equal values keep their order),
// so that the largest is printed last, as bcc does.
void sort_by_value(std::vector<report::Record>& records);

// Merges records that would print the same text under style (same comm, pid,
// stack states and frame texts; addresses too when style shows them), summing
// their values; the first of each group keeps its place. Stacks that differ
// only in raw addresses inside the same functions (different instructions of
// one loop) then print once, with their total, instead of once per address
// as bcc does.
void merge_same_text(std::vector<report::Record>& records, const report::FrameTable& frames,
                     const report::Style& style);

// One frame of a record as folded output prints it, root first, with what
// it is, so that every format that draws stacks (folded, flame graph,
// speedscope, JSON) shows the same frames in the same order.
enum class FrameKind {
  kProcess,    // comm (style.folded_comm)
  kUser,       // a user frame, or the "[Missed User Stack]" marker
  kDelimiter,  // "-" between user and kernel (style.delimiter)
  kKernel,     // a kernel frame, or the "[Missed Kernel Stack]" marker
};
struct FoldedFrame {
  std::string text;  // printable; ';' still in it (folded output maps it to ':')
  FrameKind kind;
  const report::Frame* frame = nullptr;  // the record's frame; null for comm, "-", markers
};
// Root first: comm (style.folded_comm), user root..leaf, "-" (style.delimiter,
// both sides present), kernel root..leaf; absent sides contribute nothing.
std::vector<FoldedFrame> folded_frames(const report::Record& r, const report::FrameTable& frames,
                                       const report::Style& style);
// The same frames into the caller's storage, reused from record to record
// (no allocation per frame): each frame's text appended to text, where its
// span says. Both are cleared first.
struct FoldedSpan {
  uint32_t at, size;  // in text
  FrameKind kind;
  const report::Frame* frame;  // as FoldedFrame's
};
void folded_frames(const report::Record& r, const report::FrameTable& frames,
                   const report::Style& style, std::string& text, std::vector<FoldedSpan>& spans);

// Writes records in the order given.
void render_multiline(std::ostream& out, const std::vector<report::Record>& records,
                      const report::FrameTable& frames, const report::Style& style);
void render_folded(std::ostream& out, const std::vector<report::Record>& records,
                   const report::FrameTable& frames, const report::Style& style);

// One frame's text: name (or "[unknown]"), "+0xoff" with offsets (resolved
// names only), "_[k]" for annotated kernel frames (unknown ones too, as bcc).
// Shared by renderers and line-per-event tools.
std::string frame_text(const report::Frame& f, bool kernel, const report::Style& style);
// The same, appended to out.
void append_frame_text(std::string& out, const report::Frame& f, bool kernel,
                       const report::Style& style);

}  // namespace tracekit::output
