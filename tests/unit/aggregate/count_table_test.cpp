#include "aggregate/count_table.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace tracekit::aggregate {
namespace {

using Totals = std::map<std::tuple<uint32_t, uint32_t, StackId, StackId>, uint64_t>;

Totals totals(const CountTable& t) {
  Totals out;
  t.for_each([&](const StackKey& k, uint64_t total) {
    auto [it, added] = out.emplace(std::tuple(k.pid, k.comm, k.kernel, k.user), total);
    EXPECT_TRUE(added) << "key listed twice";
  });
  return out;
}

struct Add {
  StackKey key;
  uint64_t value;
  bool want;  // add()'s result
};

struct CountCase {
  std::string name;
  size_t capacity;
  std::vector<Add> adds;
  Totals want;
  uint64_t want_dropped;
};

class AggregateCountTableAddTest : public testing::TestWithParam<CountCase> {};

TEST_P(AggregateCountTableAddTest, Totals) {
  const CountCase& c = GetParam();
  CountTable t(c.capacity);
  for (size_t i = 0; i < c.adds.size(); ++i) {
    EXPECT_EQ(t.add(c.adds[i].key, c.adds[i].value), c.adds[i].want) << "add #" << i;
  }
  EXPECT_EQ(totals(t), c.want);
  EXPECT_EQ(t.size(), c.want.size());
  EXPECT_EQ(t.dropped(), c.want_dropped);
  EXPECT_EQ(t.capacity(), c.capacity);
}

const StackKey kK1{100, 1, 0, 1};
const StackKey kK2{100, 1, 0, kNoStack};
const StackKey kK3{200, 2, kStackLost, 3};

INSTANTIATE_TEST_SUITE_P(
    Cases, AggregateCountTableAddTest,
    testing::Values(
        CountCase{"Empty", 4, {}, {}, 0},
        CountCase{"SameKeySums",
                  4,
                  {{kK1, 1, true}, {kK1, 1, true}, {kK1, 40, true}},
                  {{{100, 1, 0, 1}, 42}},
                  0},
        CountCase{"EveryFieldCounts",
                  16,
                  {{{1, 0, 0, 0}, 1, true},
                   {{0, 1, 0, 0}, 2, true},
                   {{0, 0, 1, 0}, 3, true},
                   {{0, 0, 0, 1}, 4, true},
                   {{0, 0, kNoStack, 0}, 5, true},
                   {{0, 0, kStackLost, 0}, 6, true},
                   {{0, 0, 0, 0}, 7, true}},
                  {{{1, 0, 0, 0}, 1},
                   {{0, 1, 0, 0}, 2},
                   {{0, 0, 1, 0}, 3},
                   {{0, 0, 0, 1}, 4},
                   {{0, 0, kNoStack, 0}, 5},
                   {{0, 0, kStackLost, 0}, 6},
                   {{0, 0, 0, 0}, 7}},
                  0},
        CountCase{"ZeroValueStillStoresKey", 4, {{kK1, 0, true}}, {{{100, 1, 0, 1}, 0}}, 0},
        CountCase{"FullTableDropsNewKeysKeepsOldOnes",
                  2,
                  {{kK1, 1, true},
                   {kK2, 1, true},
                   {kK3, 5, false},
                   {kK1, 2, true},
                   {kK3, 5, false},
                   {kK2, 3, true}},
                  {{{100, 1, 0, 1}, 3}, {{100, 1, 0, kNoStack}, 4}},
                  2},
        CountCase{"ZeroCapacityDropsEverything", 0, {{kK1, 1, false}, {kK1, 1, false}}, {}, 2}),
    [](const testing::TestParamInfo<CountCase>& info) { return info.param.name; });

// Reports sort stably by total, so ties keep for_each's order: first added.
TEST(AggregateCountTableTest, ForEachInFirstSeenOrderThroughGrowth) {
  CountTable t(100000);
  std::vector<uint32_t> pids;
  for (uint32_t i = 0; i < 20000; ++i) pids.push_back((i * 7919) % 20011);
  for (uint32_t pid : pids) t.add({pid, 1, 2, 3});
  for (uint32_t pid : pids) t.add({pid, 1, 2, 3});
  std::vector<uint32_t> seen;
  t.for_each([&](const StackKey& k, uint64_t total) {
    seen.push_back(k.pid);
    EXPECT_EQ(total, 2u);
  });
  EXPECT_EQ(seen, pids);
}

TEST(AggregateCountTableTest, FullReportsCapacityReached) {
  CountTable t(2);
  EXPECT_FALSE(t.full());
  t.add(kK1);
  EXPECT_FALSE(t.full());
  t.add(kK2);
  EXPECT_TRUE(t.full());
}

// Many distinct keys force many growths; totals must match a reference map.
TEST(AggregateCountTableTest, ManyKeysThroughGrowth) {
  std::mt19937_64 rng(7);
  CountTable t(1 << 20);
  Totals want;
  for (int i = 0; i < 400000; ++i) {
    const StackKey k{static_cast<uint32_t>(rng() % 500), static_cast<uint32_t>(rng() % 20),
                     static_cast<StackId>(rng() % 100) - 2, static_cast<StackId>(rng() % 10) - 2};
    const uint64_t v = rng() % 1000;
    ASSERT_TRUE(t.add(k, v));
    want[{k.pid, k.comm, k.kernel, k.user}] += v;
  }
  EXPECT_EQ(t.size(), want.size());
  EXPECT_EQ(t.dropped(), 0u);
  EXPECT_EQ(totals(t), want);
}

TEST(AggregateCountTableTest, CapacityReachedDuringGrowth) {
  CountTable t(1000);
  for (uint32_t pid = 0; pid < 3000; ++pid) ASSERT_EQ(t.add({pid, 0, 0, 0}, pid), pid < 1000);
  EXPECT_EQ(t.size(), 1000u);
  EXPECT_EQ(t.dropped(), 2000u);
  uint64_t sum = 0;
  t.for_each([&](const StackKey& k, uint64_t total) {
    EXPECT_LT(k.pid, 1000u);
    EXPECT_EQ(total, k.pid);
    sum += total;
  });
  EXPECT_EQ(sum, 999u * 1000 / 2);
}

}  // namespace
}  // namespace tracekit::aggregate
