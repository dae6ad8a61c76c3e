// Renderers for stack reports: bcc's multi-line format and the folded format
// of flame graphs. Input is resolved records (names already looked up) and
// the FrameTable their stacks' frames are in; output goes to any
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
#include <ranges>
#include <span>
#include <string>
#include <vector>

namespace tracekit::output {

struct Frame {
  uint64_t addr = 0;
  std::string name;  // empty: unresolved, printed as "[unknown]"
  uint64_t offset = 0;
  int32_t mapping = -1;  // index into report::Report::mappings; -1: none known
};

enum class StackState {
  kAbsent,   // not collected (user side under -K): prints nothing
  kMissed,   // collected but lost (table full): prints the "missed" marker
  kPresent,  // frames below (possibly empty)
};

// A stack side of a record: its frames are a run of ids in the FrameTable
// of its records (FrameTable::frames()), leaf first.
struct Stack {
  StackState state = StackState::kAbsent;
  uint32_t first = 0;  // where its ids start in the table
  uint32_t size = 0;   // how many frames
};

// The frames that a set of records' stacks name: each frame (an address
// and what it resolved to) stored once however many stacks hold it, and
// each stack as a run of 4-byte ids into them. 100,000 stacks of 16 frames
// cost 6.4 MB of ids here, not 1.6 million frames with a name each (about
// 90 MB). Records are rendered with the table they were built with.
class FrameTable {
 public:
  using Id = uint32_t;

  // Stores f; its id. Callers that see a frame again reuse its id.
  Id add(Frame f) {
    frames_.push_back(std::move(f));
    return static_cast<Id>(frames_.size() - 1);
  }
  // A present stack of the frames ids names, leaf first.
  Stack stack(std::span<const Id> ids) {
    Stack s{StackState::kPresent, static_cast<uint32_t>(ids_.size()),
            static_cast<uint32_t>(ids.size())};
    ids_.insert(ids_.end(), ids.begin(), ids.end());
    return s;
  }
  // A present stack of frames, each stored (add()) as a frame of its own.
  Stack stack(std::vector<Frame> frames);
  // Room for stacks of n frames in all.
  void reserve(size_t n) { ids_.reserve(n); }

  const Frame& operator[](Id id) const { return frames_[id]; }
  Frame& operator[](Id id) { return frames_[id]; }
  // A stack's ids, leaf first (empty unless present); valid until the
  // next stack is added.
  std::span<const Id> ids(const Stack& s) const {
    if (s.state != StackState::kPresent) return {};
    return std::span<const Id>(ids_).subspan(s.first, s.size);
  }
  // A stack's frames, leaf first: `for (const Frame& f : table.frames(s))`.
  auto frames(const Stack& s) const {
    return std::views::transform(ids(s), [this](Id id) -> const Frame& { return frames_[id]; });
  }
  size_t size() const { return frames_.size(); }

 private:
  std::vector<Frame> frames_;  // by id
  std::vector<Id> ids_;        // every stack's ids, one run each
};

struct Record {
  std::string comm;
  int64_t pid = -1;  // printed in the process line / folded prefix
  Stack kernel;
  Stack user;
  uint64_t value = 0;
};

struct Style {
  int frame_indent = 4;          // stackcount uses 2
  bool process_line = true;      // multi-line: the "-  comm (pid)" line
  bool bracketed_process = false;  // ... as stackcount's "    comm [pid]" instead
  bool folded_comm = true;       // folded: start the line with comm
  bool delimiter = false;        // -d: "--" / "-" between kernel and user
  bool annotate_kernel = false;  // -a: "_[k]" after kernel frame names
  bool addresses = false;        // -v: address "%-16x " before each frame (multi-line)
  bool offsets = false;          // -s: "+0x1f" after resolved names
  std::string missed_kernel = "[Missed Kernel Stack]";
  std::string missed_user = "[Missed User Stack]";
};

// Sorts records by value, ascending (stable: equal values keep their order),
// so that the largest is printed last, as bcc does.
void sort_by_value(std::vector<Record>& records);

// Merges records that would print the same text under style (same comm, pid,
// stack states and frame texts; addresses too when style shows them), summing
// their values; the first of each group keeps its place. Stacks that differ
// only in raw addresses inside the same functions (different instructions of
// one loop) then print once, with their total, instead of once per address
// as bcc does.
void merge_same_text(std::vector<Record>& records, const FrameTable& frames, const Style& style);

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
  const Frame* frame = nullptr;  // the record's frame; null for comm, "-", markers
};
// Root first: comm (style.folded_comm), user root..leaf, "-" (style.delimiter,
// both sides present), kernel root..leaf; absent sides contribute nothing.
std::vector<FoldedFrame> folded_frames(const Record& r, const FrameTable& frames,
                                       const Style& style);
// The same frames into the caller's storage, reused from record to record
// (no allocation per frame): each frame's text appended to text, where its
// span says. Both are cleared first.
struct FoldedSpan {
  uint32_t at, size;  // in text
  FrameKind kind;
  const Frame* frame;  // as FoldedFrame's
};
void folded_frames(const Record& r, const FrameTable& frames, const Style& style, std::string& text,
                   std::vector<FoldedSpan>& spans);

// Writes records in the order given.
void render_multiline(std::ostream& out, const std::vector<Record>& records,
                      const FrameTable& frames, const Style& style);
void render_folded(std::ostream& out, const std::vector<Record>& records, const FrameTable& frames,
                   const Style& style);

// One frame's text: name (or "[unknown]"), "+0xoff" with offsets (resolved
// names only), "_[k]" for annotated kernel frames (unknown ones too, as bcc).
// Shared by renderers and line-per-event tools.
std::string frame_text(const Frame& f, bool kernel, const Style& style);
// The same, appended to out.
void append_frame_text(std::string& out, const Frame& f, bool kernel, const Style& style);

}  // namespace tracekit::output
