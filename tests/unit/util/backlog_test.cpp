// Records held back come out in the order they went in, once, and the cap
// is never passed.
#include "util/backlog.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace tracekit {
namespace {

std::span<const uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

std::vector<std::pair<uint64_t, std::string>> replayed(Backlog& b) {
  std::vector<std::pair<uint64_t, std::string>> out;
  b.replay([&](uint64_t tag, std::span<const uint8_t> r) {
    out.emplace_back(tag, std::string(r.begin(), r.end()));
  });
  return out;
}

TEST(BacklogTest, ReplaysInOrderOnce) {
  Backlog b;
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.hold(1, bytes("page of cpu 1")));
  EXPECT_TRUE(b.hold(0, bytes("page of cpu 0")));
  EXPECT_TRUE(b.hold(1, bytes("")));
  EXPECT_TRUE(b.hold(1, bytes("next of cpu 1")));
  EXPECT_EQ(b.bytes(), 39u);
  using R = std::vector<std::pair<uint64_t, std::string>>;
  EXPECT_EQ(replayed(b), (R{{1, "page of cpu 1"}, {0, "page of cpu 0"}, {1, ""}, {1, "next of cpu 1"}}));
  EXPECT_TRUE(b.empty());
  EXPECT_EQ(b.bytes(), 0u);
  EXPECT_TRUE(replayed(b).empty());
}

TEST(BacklogTest, RefusesWhatWouldPassTheCap) {
  Backlog b(10);
  EXPECT_TRUE(b.hold(0, bytes("123456")));
  EXPECT_FALSE(b.hold(0, bytes("12345")));  // 11 bytes: refused, nothing kept
  EXPECT_TRUE(b.hold(0, bytes("1234")));    // exactly 10
  EXPECT_FALSE(b.hold(0, bytes("1")));
  EXPECT_EQ(replayed(b).size(), 2u);
  EXPECT_TRUE(b.hold(0, bytes("1234567890")));  // room again
}

TEST(BacklogTest, WhatReplayHoldsWaitsForTheNextReplay) {
  Backlog b;
  ASSERT_TRUE(b.hold(7, bytes("a")));
  size_t calls = 0;
  b.replay([&](uint64_t, std::span<const uint8_t>) {
    ++calls;
    EXPECT_TRUE(b.hold(8, bytes("b")));
  });
  EXPECT_EQ(calls, 1u);
  using R = std::vector<std::pair<uint64_t, std::string>>;
  EXPECT_EQ(replayed(b), (R{{8, "b"}}));
}

}  // namespace
}  // namespace tracekit
