// The printer's caller of an entry probe (uprobe -s): the frame inserted
// into the user stack, and its fetch argument kept off the event's line.
#include "family/events/printer.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tracekit::events {
namespace {

using Frames = std::vector<uint64_t>;

Frames inserted(const Frames& stack, uint64_t caller, size_t max = 8) {
  Frames out{0xdead};  // replaced
  with_caller(stack, caller, max, out);
  return out;
}

TEST(PrinterCallerTest, InsertedAsTheSecondFrame) {
  EXPECT_EQ(inserted({0x1265, 0x7f00124a}, 0x134f), (Frames{0x1265, 0x134f, 0x7f00124a}));
  // The walk stopped at the leaf: the caller follows it.
  EXPECT_EQ(inserted({0x1265}, 0x134f), (Frames{0x1265, 0x134f}));
}

TEST(PrinterCallerTest, NeverTwice) {
  // A walker that found the caller itself.
  EXPECT_EQ(inserted({0x1265, 0x134f, 0x7f00124a}, 0x134f), (Frames{0x1265, 0x134f, 0x7f00124a}));
}

TEST(PrinterCallerTest, NothingToInsert) {
  EXPECT_EQ(inserted({}, 0x134f), Frames{});          // no stack
  EXPECT_EQ(inserted({0x1265, 0x7f0}, 0), (Frames{0x1265, 0x7f0}));  // the read failed
}

TEST(PrinterCallerTest, KeepsTheRecordsLength) {
  Frames full{1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(inserted(full, 0x99), (Frames{1, 0x99, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(inserted({1, 2, 3}, 0x99, 3), (Frames{1, 0x99, 2}));
  EXPECT_EQ(inserted({1, 2, 3}, 0x99, 1), (Frames{1, 0x99}));  // 2 at least
}

TEST(PrinterCallerTest, DropsTheLastArgumentOfItsLine) {
  std::string text =
      "x\n           a-1 [001] ..... 1.000001: f: (0x5583a0c1d265) i=3 __c=0x5583a0c1d34f\n"
      "           a-1 [001] ..... 1.000001: <user stack trace>\n";
  const size_t begin = 2;
  drop_last_argument(text, begin, "__c");
  EXPECT_EQ(text,
            "x\n           a-1 [001] ..... 1.000001: f: (0x5583a0c1d265) i=3\n"
            "           a-1 [001] ..... 1.000001: <user stack trace>\n");
  // The line's end is the text's end.
  std::string last = "f: (0x1) __c=0x2";
  drop_last_argument(last, 0, "__c");
  EXPECT_EQ(last, "f: (0x1)");
}

TEST(PrinterCallerTest, LeavesOtherTextAlone) {
  // Not the last argument, another name, or on another line.
  for (std::string text : {"f: (0x1) __c=0x2 i=3\n", "f: (0x1) __cc=0x2\n", "f: (0x1) x__c=0x2\n",
                           "f: (0x1)\nf: (0x1) __c=0x2\n"}) {
    std::string before = text;
    drop_last_argument(text, 0, "__c");
    EXPECT_EQ(text, before);
  }
}

}  // namespace
}  // namespace tracekit::events
