#include "output/stack_report.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

namespace tracekit::output {
namespace {

// The report model that these renderers print.
using report::Frame;
using report::FrameTable;
using report::Record;
using report::Stack;
using report::StackState;
using report::Style;

// The frames of every record these tests make.
FrameTable& table() {
  static FrameTable t;
  return t;
}
Stack present(std::vector<Frame> frames) { return table().stack(std::move(frames)); }
Stack missed() { return Stack{StackState::kMissed}; }
Stack absent() { return Stack{StackState::kAbsent}; }
// A present stack's frame i.
Frame& frame(const Stack& s, size_t i) { return table()[table().ids(s)[i]]; }

// dd reading /dev/zero, as in bcc's profile example: both sides, leaf first.
Record dd_read(uint64_t value = 9) {
  Record r;
  r.comm = "dd";
  r.pid = 25036;
  r.kernel = present({{0xffffffff81400b30, "__clear_user", 0x30},
                      {0xffffffff81401a5e, "iov_iter_zero", 0x5e},
                      {0xffffffff81a0000c, "entry_SYSCALL_64_fastpath", 0xc}});
  r.user = present({{0x7f2c1a2b3c4d, "read", 0x1d}, {0x55d0c0de1234, "", 0}});
  r.value = value;
  return r;
}

Style style_with(void (*tweak)(Style&)) {
  Style s;
  tweak(s);
  return s;
}

std::string multiline(const std::vector<Record>& records, const Style& style) {
  std::ostringstream out;
  render_multiline(out, records, table(), style);
  return out.str();
}

std::string folded(const std::vector<Record>& records, const Style& style) {
  std::ostringstream out;
  render_folded(out, records, table(), style);
  return out.str();
}

struct RenderCase {
  const char* name;
  std::vector<Record> records;
  Style style;
  std::string want;
};

TEST(OutputMultilineTest, Golden) {
  Record kernel_only = dd_read(3);
  kernel_only.user = absent();
  Record user_only = dd_read(4);
  user_only.kernel = absent();
  Record both_missed = dd_read(5);
  both_missed.kernel = missed();
  both_missed.user = missed();
  Record user_missed = dd_read(6);
  user_missed.user = missed();
  Record empty_kernel = dd_read(1);  // sampled in user space: no kernel frames
  empty_kernel.kernel = present({});
  Record nothing = dd_read(2);
  nothing.kernel = present({});
  nothing.user = present({});
  Record stackcount;
  stackcount.kernel =
      present({{0xffffffff81300000, "submit_bio", 0}, {0xffffffff81300100, "submit_bh", 0x1f}});
  stackcount.value = 38;

  const std::vector<RenderCase> cases = {
      {"profile",
       {dd_read()},
       Style{},
       "    __clear_user\n"
       "    iov_iter_zero\n"
       "    entry_SYSCALL_64_fastpath\n"
       "    read\n"
       "    [unknown]\n"
       "    -                dd (25036)\n"
       "        9\n"
       "\n"},
      {"profile -d",
       {dd_read()},
       style_with([](Style& s) { s.delimiter = true; }),
       "    __clear_user\n"
       "    iov_iter_zero\n"
       "    entry_SYSCALL_64_fastpath\n"
       "    --\n"
       "    read\n"
       "    [unknown]\n"
       "    -                dd (25036)\n"
       "        9\n"
       "\n"},
      // As in bcc's example: a user-space sample still gets its "--".
      {"profile -d, empty kernel side",
       {empty_kernel},
       style_with([](Style& s) { s.delimiter = true; }),
       "    --\n"
       "    read\n"
       "    [unknown]\n"
       "    -                dd (25036)\n"
       "        1\n"
       "\n"},
      {"profile -K -d",
       {kernel_only},
       style_with([](Style& s) { s.delimiter = true; }),
       "    __clear_user\n"
       "    iov_iter_zero\n"
       "    entry_SYSCALL_64_fastpath\n"
       "    -                dd (25036)\n"
       "        3\n"
       "\n"},
      {"profile -U -d",
       {user_only},
       style_with([](Style& s) { s.delimiter = true; }),
       "    read\n"
       "    [unknown]\n"
       "    -                dd (25036)\n"
       "        4\n"
       "\n"},
      {"missed both, -d",
       {both_missed},
       style_with([](Style& s) { s.delimiter = true; }),
       "    [Missed Kernel Stack]\n"
       "    [Missed User Stack]\n"
       "    -                dd (25036)\n"
       "        5\n"
       "\n"},
      {"missed user, -d",
       {user_missed},
       style_with([](Style& s) { s.delimiter = true; }),
       "    __clear_user\n"
       "    iov_iter_zero\n"
       "    entry_SYSCALL_64_fastpath\n"
       "    [Missed User Stack]\n"
       "    -                dd (25036)\n"
       "        6\n"
       "\n"},
      {"empty stacks",
       {nothing},
       Style{},
       "    -                dd (25036)\n"
       "        2\n"
       "\n"},
      {"addresses",
       {kernel_only},
       style_with([](Style& s) { s.addresses = true; }),
       "    ffffffff81400b30 __clear_user\n"
       "    ffffffff81401a5e iov_iter_zero\n"
       "    ffffffff81a0000c entry_SYSCALL_64_fastpath\n"
       "    -                dd (25036)\n"
       "        3\n"
       "\n"},
      {"short address padded to 16",
       {user_only},
       style_with([](Style& s) { s.addresses = true; }),
       "    7f2c1a2b3c4d     read\n"
       "    55d0c0de1234     [unknown]\n"
       "    -                dd (25036)\n"
       "        4\n"
       "\n"},
      {"offsets and annotations",
       {dd_read()},
       style_with([](Style& s) {
         s.offsets = true;
         s.annotate_kernel = true;
       }),
       "    __clear_user+0x30_[k]\n"
       "    iov_iter_zero+0x5e_[k]\n"
       "    entry_SYSCALL_64_fastpath+0xc_[k]\n"
       "    read+0x1d\n"
       "    [unknown]\n"
       "    -                dd (25036)\n"
       "        9\n"
       "\n"},
      {"stackcount -sv",
       {stackcount},
       style_with([](Style& s) {
         s.frame_indent = 2;
         s.process_line = false;
         s.offsets = true;
         s.addresses = true;
       }),
       "  ffffffff81300000 submit_bio+0x0\n"
       "  ffffffff81300100 submit_bh+0x1f\n"
       "    38\n"
       "\n"},
      {"stackcount, two records",
       {stackcount, stackcount},
       style_with([](Style& s) {
         s.frame_indent = 2;
         s.process_line = false;
       }),
       "  submit_bio\n"
       "  submit_bh\n"
       "    38\n"
       "\n"
       "  submit_bio\n"
       "  submit_bh\n"
       "    38\n"
       "\n"},
      {"no records", {}, Style{}, ""},
  };
  for (const auto& c : cases) EXPECT_EQ(multiline(c.records, c.style), c.want) << c.name;
}

TEST(OutputMultilineTest, LongCommIsNotCut) {
  Record r;
  r.comm = "a-very-long-thread-name";
  r.pid = 0;
  r.kernel = present({{0, "native_safe_halt", 0}});
  r.value = 72;
  EXPECT_EQ(multiline({r}, Style{}),
            "    native_safe_halt\n"
            "    -                a-very-long-thread-name (0)\n"
            "        72\n"
            "\n");
}

TEST(OutputMultilineTest, CustomMissedMarkers) {
  Record r;
  r.comm = "x";
  r.pid = 1;
  r.kernel = missed();
  r.user = missed();
  r.value = 1;
  Style s;
  s.missed_kernel = "[Missed Kernel Stack: table full]";
  s.missed_user = "[Missed User Stack: table full]";
  EXPECT_EQ(multiline({r}, s),
            "    [Missed Kernel Stack: table full]\n"
            "    [Missed User Stack: table full]\n"
            "    -                x (1)\n"
            "        1\n"
            "\n");
}

TEST(OutputMultilineTest, ControlCharactersCannotBreakLines) {
  Record r;
  r.comm = "evil\ncomm";
  r.pid = 7;
  r.user = present({{0, "fn\twith\ncontrols\x7f", 0}});
  r.value = 1;
  EXPECT_EQ(multiline({r}, Style{}),
            "    fn?with?controls?\n"
            "    -                evil?comm (7)\n"
            "        1\n"
            "\n");
}

TEST(OutputFoldedTest, Golden) {
  Record kernel_only = dd_read(3);
  kernel_only.user = absent();
  Record user_only = dd_read(4);
  user_only.kernel = absent();
  Record both_missed = dd_read(5);
  both_missed.kernel = missed();
  both_missed.user = missed();
  Record kernel_missed = dd_read(6);
  kernel_missed.kernel = missed();
  Record empty_kernel = dd_read(1);
  empty_kernel.kernel = present({});
  Record nothing = dd_read(2);
  nothing.kernel = present({});
  nothing.user = present({});

  const std::vector<RenderCase> cases = {
      {"profile -f",
       {dd_read()},
       Style{},
       "dd;[unknown];read;entry_SYSCALL_64_fastpath;iov_iter_zero;__clear_user 9\n"},
      {"profile -fd",
       {dd_read()},
       style_with([](Style& s) { s.delimiter = true; }),
       "dd;[unknown];read;-;entry_SYSCALL_64_fastpath;iov_iter_zero;__clear_user 9\n"},
      {"profile -fda",
       {dd_read()},
       style_with([](Style& s) {
         s.delimiter = true;
         s.annotate_kernel = true;
       }),
       "dd;[unknown];read;-;entry_SYSCALL_64_fastpath_[k];iov_iter_zero_[k];__clear_user_[k] 9\n"},
      {"no comm",
       {dd_read()},
       style_with([](Style& s) { s.folded_comm = false; }),
       "[unknown];read;entry_SYSCALL_64_fastpath;iov_iter_zero;__clear_user 9\n"},
      {"-K -d: no delimiter",
       {kernel_only},
       style_with([](Style& s) { s.delimiter = true; }),
       "dd;entry_SYSCALL_64_fastpath;iov_iter_zero;__clear_user 3\n"},
      {"-U -d: no delimiter",
       {user_only},
       style_with([](Style& s) { s.delimiter = true; }),
       "dd;[unknown];read 4\n"},
      {"missed both -d",
       {both_missed},
       style_with([](Style& s) {
         s.delimiter = true;
         s.annotate_kernel = true;
       }),
       "dd;[Missed User Stack];[Missed Kernel Stack] 5\n"},
      {"missed kernel -d",
       {kernel_missed},
       style_with([](Style& s) { s.delimiter = true; }),
       "dd;[unknown];read;[Missed Kernel Stack] 6\n"},
      {"empty kernel -d",
       {empty_kernel},
       style_with([](Style& s) { s.delimiter = true; }),
       "dd;[unknown];read;- 1\n"},
      {"empty stacks", {nothing}, Style{}, "dd 2\n"},
      {"empty stacks, no comm",
       {nothing},
       style_with([](Style& s) { s.folded_comm = false; }),
       " 2\n"},
      {"offsets, addresses ignored",
       {user_only},
       style_with([](Style& s) {
         s.offsets = true;
         s.addresses = true;
       }),
       "dd;[unknown];read+0x1d 4\n"},
      {"two records",
       {kernel_only, user_only},
       Style{},
       "dd;entry_SYSCALL_64_fastpath;iov_iter_zero;__clear_user 3\n"
       "dd;[unknown];read 4\n"},
      {"no records", {}, Style{}, ""},
  };
  for (const auto& c : cases) EXPECT_EQ(folded(c.records, c.style), c.want) << c.name;
}

// Folded lines are split at ';' into frames and at the last ' ' for the
// count: ';' and line breaks inside names are rewritten, spaces kept.
TEST(OutputFoldedTest, NamesCannotBreakTheFormat) {
  Record r;
  r.comm = "we;ird name";
  r.pid = 1;
  r.user = present(
      {{0, "std::vector<int, std::allocator<int> >::push_back(int const&)", 0}, {0, "a;b\nc", 0}});
  r.value = 12;
  EXPECT_EQ(folded({r}, Style{}),
            "we:ird name;a:b?c;std::vector<int, std::allocator<int> >::push_back(int const&) 12\n");
}

TEST(OutputFrameTextTest, Cases) {
  struct Case {
    Frame frame;
    bool kernel;
    bool offsets;
    bool annotate;
    std::string want;
  };
  const std::vector<Case> cases = {
      {{0x10, "vfs_read", 0x1f}, true, false, false, "vfs_read"},
      {{0x10, "vfs_read", 0x1f}, true, true, false, "vfs_read+0x1f"},
      {{0x10, "vfs_read", 0x0}, true, true, false, "vfs_read+0x0"},
      {{0x10, "vfs_read", 0xabc}, true, true, true, "vfs_read+0xabc_[k]"},
      {{0x10, "vfs_read", 0}, true, false, true, "vfs_read_[k]"},
      {{0x10, "main", 0x8}, false, true, true, "main+0x8"},  // user: never annotated
      {{0x10, "", 0x8}, false, true, false, "[unknown]"},    // no offset without a name
      {{0x10, "", 0x8}, true, true, true, "[unknown]_[k]"},  // bcc: ksym() + "_[k]"
      {{0x10, "", 0}, true, false, false, "[unknown]"},
  };
  for (const auto& c : cases) {
    Style s;
    s.offsets = c.offsets;
    s.annotate_kernel = c.annotate;
    EXPECT_EQ(frame_text(c.frame, c.kernel, s), c.want) << c.want;
  }
}

TEST(OutputSortTest, AscendingAndStable) {
  std::vector<Record> records;
  for (auto [comm, value] : std::vector<std::pair<const char*, uint64_t>>{
           {"e", 5}, {"a", 1}, {"c1", 3}, {"z", 100}, {"c2", 3}, {"zero", 0}, {"c3", 3}}) {
    Record r;
    r.comm = comm;
    r.value = value;
    records.push_back(r);
  }
  sort_by_value(records);
  std::string order;
  for (const auto& r : records) order += r.comm + " ";
  EXPECT_EQ(order, "zero a c1 c2 c3 e z ");
}

TEST(OutputSortTest, Empty) {
  std::vector<Record> records;
  sort_by_value(records);
  EXPECT_TRUE(records.empty());
}

}  // namespace
}  // namespace tracekit::output

namespace tracekit::output {
namespace {

Record rec(std::string comm, uint64_t addr, std::string name, uint64_t value) {
  Record r;
  r.comm = std::move(comm);
  r.pid = 5;
  r.user = present({Frame{addr, std::move(name), 0}});
  r.value = value;
  return r;
}

TEST(OutputMergeTest, SameTextMergesAndKeepsFirstPlace) {
  std::vector<Record> rs{rec("a", 0x10, "f", 1), rec("a", 0x20, "g", 2), rec("a", 0x11, "f", 3),
                         rec("b", 0x10, "f", 4)};
  Style style;
  merge_same_text(rs, table(), style);
  ASSERT_EQ(rs.size(), 3u);
  EXPECT_EQ(frame(rs[0].user, 0).name, "f");
  EXPECT_EQ(rs[0].value, 4u);
  EXPECT_EQ(rs[1].value, 2u);
  EXPECT_EQ(rs[2].comm, "b");
}

TEST(OutputMergeTest, AddressesOrOffsetsShownKeepRecordsApart) {
  std::vector<Record> rs{rec("a", 0x10, "f", 1), rec("a", 0x11, "f", 3)};
  frame(rs[1].user, 0).offset = 1;
  Style with_addr;
  with_addr.addresses = true;
  auto copy = rs;
  merge_same_text(copy, table(), with_addr);
  EXPECT_EQ(copy.size(), 2u);
  Style with_off;
  with_off.offsets = true;
  copy = rs;
  merge_same_text(copy, table(), with_off);
  EXPECT_EQ(copy.size(), 2u);
}

// Grouping goes by the printed text, never built: what prints the same
// merges, frame boundaries and sides count.
TEST(OutputMergeTest, WhatPrintsTheSameMergesAndNothingElse) {
  std::vector<Record> rs{rec("a", 0x10, "f\tx", 1), rec("a", 0x20, "f\nx", 2),
                         rec("a", 0x30, "f?x", 4), rec("a", 0x40, "", 8),
                         rec("a", 0x50, "[unknown]", 16)};
  merge_same_text(rs, table(), Style{});
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].value, 7u);   // "f?x" three times
  EXPECT_EQ(rs[1].value, 24u);  // "[unknown]" twice

  Record ab = rec("a", 0x10, "ab", 1);
  ab.user = present({Frame{0x10, "ab", 0}, Frame{0x11, "c", 0}});
  Record bc = rec("a", 0x10, "a", 1);
  bc.user = present({Frame{0x10, "a", 0}, Frame{0x11, "bc", 0}});
  Record kernel_side = rec("a", 0x10, "ab", 1);
  kernel_side.user = absent();
  kernel_side.kernel = present({Frame{0x10, "ab", 0}, Frame{0x11, "c", 0}});
  std::vector<Record> apart{ab, bc, kernel_side};
  merge_same_text(apart, table(), Style{});
  EXPECT_EQ(apart.size(), 3u);
}

// C1 controls (CSI as UTF-8, or as a lone byte) print as '?' too, and
// names that print the same merge, whatever their length in bytes.
TEST(OutputMergeTest, C1ControlsPrintAsQuestionMarksAndMerge) {
  std::vector<Record> rs{rec("a", 0x10, "f\xc2\x9bx", 1), rec("a", 0x20, "f\x9bx", 2),
                         rec("a", 0x30, "f?x", 4), rec("a", 0x40, "f\xc3\xa9x", 8)};
  merge_same_text(rs, table(), Style{});
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(rs[0].value, 7u);  // "f?x" three times
  EXPECT_EQ(rs[1].value, 8u);  // UTF-8 as it is
  EXPECT_EQ(multiline({rs[0]}, Style{}).substr(0, 8), "    f?x\n");
}

TEST(OutputMergeTest, StatesAreNotMixedUp) {
  Record missed = rec("a", 0, "", 1);
  missed.user = {StackState::kMissed};
  Record absent = rec("a", 0, "", 1);
  absent.user = {};
  std::vector<Record> rs{missed, absent};
  merge_same_text(rs, table(), Style{});
  EXPECT_EQ(rs.size(), 2u);
}

}  // namespace
}  // namespace tracekit::output

namespace tracekit::output {
namespace {

TEST(OutputStackcountStyleTest, BracketedProcessLine) {
  Record r;
  r.comm = "bash";
  r.pid = 42;
  r.kernel = present({Frame{1, "vfs_read", 0}, Frame{2, "ksys_read", 0}});
  r.value = 7;
  Style s;
  s.frame_indent = 2;
  s.bracketed_process = true;
  std::ostringstream out;
  render_multiline(out, {r}, table(), s);
  EXPECT_EQ(out.str(), "  vfs_read\n  ksys_read\n    bash [42]\n    7\n\n");
}

}  // namespace
}  // namespace tracekit::output
