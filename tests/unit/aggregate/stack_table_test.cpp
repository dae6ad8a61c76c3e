#include "aggregate/stack_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace tracekit::aggregate {
namespace {

using Stack = std::vector<uint64_t>;

constexpr uint64_t kA = 0xffffffff81000010;
constexpr uint64_t kB = 0xffffffff81234560;
constexpr uint64_t kC = 0x00007f0012345678;

std::vector<StackId> intern_all(StackTable& t, const std::vector<Stack>& stacks) {
  std::vector<StackId> ids;
  for (const auto& s : stacks) ids.push_back(t.intern(s));
  return ids;
}

struct InternCase {
  std::string name;
  size_t capacity;
  std::vector<Stack> stacks;  // interned in order
  std::vector<StackId> want;  // the id each intern() returns
  size_t want_size;
  uint64_t want_lost;
};

class AggregateStackTableInternTest : public testing::TestWithParam<InternCase> {};

TEST_P(AggregateStackTableInternTest, Ids) {
  const InternCase& c = GetParam();
  StackTable t(c.capacity);
  EXPECT_EQ(intern_all(t, c.stacks), c.want);
  EXPECT_EQ(t.size(), c.want_size);
  EXPECT_EQ(t.lost(), c.want_lost);
  EXPECT_EQ(t.capacity(), c.capacity);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AggregateStackTableInternTest,
    testing::Values(
        InternCase{"SameStackSameId", 16, {{kA, kB, kC}, {kA, kB, kC}}, {0, 0}, 1, 0},
        InternCase{"DifferentStacksDifferentIds", 16, {{kA}, {kB}, {kC}, {kB}}, {0, 1, 2, 1}, 3, 0},
        InternCase{"PrefixStacksDistinct",
                   16,
                   {{kA, kB}, {kA, kB, kC}, {kA}, {kA, kB, kC}, {kA, kB}},
                   {0, 1, 2, 1, 0},
                   3,
                   0},
        InternCase{"SameFramesOtherOrder", 16, {{kA, kB}, {kB, kA}}, {0, 1}, 2, 0},
        InternCase{"EmptyStackIsAStack", 16, {{}, {kA}, {}}, {0, 1, 0}, 2, 0},
        InternCase{
            "ZeroFramesByLength", 16, {{0}, {0, 0}, {}, {0, 0, 0}, {0}}, {0, 1, 2, 3, 0}, 4, 0},
        InternCase{"FullTableLosesNewStacks",
                   2,
                   {{kA}, {kB}, {kC}, {kA}, {kC}, {kB}},
                   {0, 1, kStackLost, 0, kStackLost, 1},
                   2,
                   2},
        InternCase{"ZeroCapacityLosesEverything", 0, {{}, {kA}}, {kStackLost, kStackLost}, 0, 2}),
    [](const testing::TestParamInfo<InternCase>& info) { return info.param.name; });

TEST(AggregateStackTableTest, FramesRoundTrip) {
  StackTable t(16);
  const std::vector<Stack> stacks = {{kA, kB, kC}, {}, {kC}};
  const auto ids = intern_all(t, stacks);
  for (size_t i = 0; i < stacks.size(); ++i) {
    auto f = t.frames(ids[i]);
    EXPECT_EQ(Stack(f.begin(), f.end()), stacks[i]) << i;
  }
}

TEST(AggregateStackTableTest, FramesOfNoStackOrLostIsEmpty) {
  StackTable t(1);
  t.intern(Stack{kA});
  ASSERT_EQ(t.intern(Stack{kB}), kStackLost);
  EXPECT_TRUE(t.frames(kNoStack).empty());
  EXPECT_TRUE(t.frames(kStackLost).empty());
}

TEST(AggregateStackTableTest, FramesSpanOutlivesLaterInterns) {
  StackTable t(100000);
  const Stack first{kA, kB, kC};
  const auto early = t.frames(t.intern(first));
  for (uint64_t i = 0; i < 50000; ++i) t.intern(Stack{kA, i, i + 1});
  EXPECT_EQ(Stack(early.begin(), early.end()), first);
  EXPECT_EQ(early.data(), t.frames(0).data());
}

// Lengths around the arena's chunk sizes, mixed with short stacks, so records
// land at chunk ends, in fresh chunks and in chunks of their own.
TEST(AggregateStackTableTest, LongStacksRoundTrip) {
  StackTable t(1000);
  std::vector<Stack> stacks;
  for (size_t len : {2047u, 2048u, 2049u, 3u, 8191u, 8192u, 8193u, 5u, 100000u, 0u, 6000u, 7000u}) {
    Stack s(len);
    for (size_t i = 0; i < len; ++i) s[i] = kA + i * 16 + stacks.size();
    stacks.push_back(std::move(s));
  }
  const auto ids = intern_all(t, stacks);
  for (size_t i = 0; i < stacks.size(); ++i) {
    ASSERT_EQ(ids[i], static_cast<StackId>(i));
    auto f = t.frames(ids[i]);
    ASSERT_EQ(Stack(f.begin(), f.end()), stacks[i]) << i;
  }
  EXPECT_EQ(intern_all(t, stacks), ids);
}

TEST(AggregateStackTableTest, InternAcceptsItsOwnFrames) {
  StackTable t(16);
  const StackId id = t.intern(Stack{kA, kB});
  EXPECT_EQ(t.intern(t.frames(id)), id);
  EXPECT_EQ(t.size(), 1u);
}

// 100k random stacks (with repeats, empties and shared prefixes) force many
// growths; every id must match a reference map and every stack round-trip.
TEST(AggregateStackTableTest, ManyStacksThroughGrowth) {
  constexpr int kStacks = 100000;
  std::mt19937_64 rng(42);
  std::vector<Stack> stacks;
  stacks.reserve(kStacks);
  for (int i = 0; i < kStacks; ++i) {
    switch (rng() % 8) {
      case 0:  // repeat an earlier stack
        stacks.push_back(stacks.empty() ? Stack{} : stacks[rng() % stacks.size()]);
        break;
      case 1:  // an earlier stack plus one frame: shares its prefix
        stacks.push_back(stacks.empty() ? Stack{} : stacks[rng() % stacks.size()]);
        stacks.back().push_back(0xffffffff81000000 + rng() % 0x1000000);
        break;
      default: {
        Stack s(rng() % 41);
        for (auto& f : s) f = (rng() & 1) ? 0xffffffff81000000 + rng() % 0x1000000 : rng() % 64;
        stacks.push_back(std::move(s));
      }
    }
  }

  StackTable t(kStacks);
  std::map<Stack, StackId> want;
  for (const auto& s : stacks) {
    const StackId id = t.intern(s);
    auto [it, added] = want.emplace(s, static_cast<StackId>(want.size()));
    ASSERT_EQ(id, it->second);
  }
  EXPECT_EQ(t.size(), want.size());
  EXPECT_EQ(t.lost(), 0u);
  for (const auto& [s, id] : want) {
    auto f = t.frames(id);
    ASSERT_EQ(Stack(f.begin(), f.end()), s) << id;
  }
  for (const auto& [s, id] : want) ASSERT_EQ(t.intern(s), id);
  EXPECT_EQ(t.size(), want.size());
}

// Low-entropy stacks (single small integers, one differing frame) must not
// collide into one id.
TEST(AggregateStackTableTest, NearIdenticalStacksDistinct) {
  constexpr uint64_t kN = 50000;
  StackTable t(2 * kN);
  for (uint64_t i = 0; i < kN; ++i) ASSERT_EQ(t.intern(Stack{i}), static_cast<StackId>(i));
  for (uint64_t i = 0; i < kN; ++i) {
    ASSERT_EQ(t.intern(Stack{kA, i, kB}), static_cast<StackId>(kN + i));
  }
  for (uint64_t i = 0; i < kN; ++i) ASSERT_EQ(t.intern(Stack{i}), static_cast<StackId>(i));
  EXPECT_EQ(t.size(), 2 * kN);
}

TEST(AggregateStackTableTest, CapacityReachedDuringGrowth) {
  constexpr int kCapacity = 1000;
  StackTable t(kCapacity);
  for (uint64_t i = 0; i < 3000; ++i) {
    const StackId id = t.intern(Stack{kA, i});
    ASSERT_EQ(id, i < kCapacity ? static_cast<StackId>(i) : kStackLost) << i;
  }
  EXPECT_EQ(t.size(), static_cast<size_t>(kCapacity));
  EXPECT_EQ(t.lost(), 2000u);
  EXPECT_EQ(t.intern(Stack{kA, 999}), 999);
  auto f = t.frames(999);
  EXPECT_EQ(Stack(f.begin(), f.end()), (Stack{kA, 999}));
}

}  // namespace
}  // namespace tracekit::aggregate
