// StackCounts::add (the signature table in front of the tables) against the
// tables alone: comms.intern + side + counts.add of the same events must give
// the same keys, totals, order, lost stacks and dropped keys.
#include "aggregate/stack_counts.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "aggregate/arena.hpp"
#include "aggregate/signature_table.hpp"

namespace tracekit::aggregate {
namespace {

using Stack = std::vector<uint64_t>;
using Side = std::optional<Stack>;

struct Ev {
  uint32_t pid;
  std::string comm;
  Side kernel, user;
  uint64_t value = 1;
};

std::optional<std::span<const uint64_t>> view(const Side& s) {
  if (!s) return std::nullopt;
  return std::span<const uint64_t>(*s);
}

// A report key as text: pid, name, and each side's frames (or none / lost).
using Row = std::tuple<uint32_t, std::string, std::string, std::string, uint64_t>;

std::string side_text(const StackCounts& c, StackId id) {
  if (id == kNoStack) return "none";
  if (id == kStackLost) return "lost";
  std::string s;
  for (uint64_t f : c.stacks.frames(id)) s += std::to_string(f) + ",";
  return s;
}

std::vector<Row> rows(const StackCounts& c) {
  std::vector<Row> out;
  c.counts.for_each([&](const StackKey& k, uint64_t total) {
    out.emplace_back(k.pid, std::string(c.comms.str(k.comm)), side_text(c, k.kernel),
                     side_text(c, k.user), total);
  });
  return out;
}

// The same events through add() and through the tables alone.
void expect_same(size_t stack_cap, size_t key_cap, const std::vector<Ev>& evs) {
  StackCounts fast(stack_cap, key_cap), ref(stack_cap, key_cap);
  for (size_t i = 0; i < evs.size(); ++i) {
    const Ev& e = evs[i];
    const bool got = fast.add(e.pid, e.comm, view(e.kernel), view(e.user), e.value);
    const bool want = ref.counts.add(
        {e.pid, ref.comms.intern(e.comm), ref.side(view(e.kernel)), ref.side(view(e.user))},
        e.value);
    ASSERT_EQ(got, want) << "event #" << i;
  }
  EXPECT_EQ(rows(fast), rows(ref));
  EXPECT_EQ(fast.counts.dropped(), ref.counts.dropped());
  EXPECT_EQ(fast.stacks.lost(), ref.stacks.lost());
  EXPECT_EQ(fast.stacks.size(), ref.stacks.size());
  EXPECT_LE(fast.signatures.size(), fast.counts.size());
}

TEST(AggregateStackCountsTest, RepeatsSum) {
  const std::vector<Ev> evs = {{1, "a", Stack{1, 2}, Stack{3}, 5}, {1, "a", Stack{1, 2}, Stack{3}, 7}};
  StackCounts c(16, 16);
  for (const Ev& e : evs) EXPECT_TRUE(c.add(e.pid, e.comm, view(e.kernel), view(e.user), e.value));
  EXPECT_EQ(rows(c), (std::vector<Row>{{1, "a", "1,2,", "3,", 12}}));
  expect_same(16, 16, evs);
}

// Empty and absent sides are both kNoStack: one key.
TEST(AggregateStackCountsTest, EmptyAndAbsentSidesAreOneKey) {
  StackCounts c(16, 16);
  c.add(1, "a", Stack{1}, std::nullopt, 1);
  c.add(1, "a", Stack{1}, Stack{}, 1);
  c.add(1, "a", std::nullopt, std::nullopt, 1);
  c.add(1, "a", Stack{}, Stack{}, 1);
  EXPECT_EQ(rows(c), (std::vector<Row>{{1, "a", "1,", "none", 2}, {1, "a", "none", "none", 2}}));
}

// The same frames as the kernel or as the user side, a name and its prefix,
// the pid: all different keys.
TEST(AggregateStackCountsTest, EveryPartCounts) {
  expect_same(64, 64,
              {{1, "a", Stack{1, 2}, std::nullopt},
               {1, "a", std::nullopt, Stack{1, 2}},
               {1, "a", Stack{1}, Stack{2}},
               {1, "a", Stack{1, 2}, Stack{1, 2}},
               {2, "a", Stack{1, 2}, std::nullopt},
               {1, "ab", Stack{1, 2}, std::nullopt},
               {1, "", Stack{1, 2}, std::nullopt},
               {1, "a-very-long-process-name-of-40-bytes....", Stack{1, 2}, std::nullopt},
               {1, "a-very-long-process-name-of-40-bytes...!", Stack{1, 2}, std::nullopt},
               {1, "a", Stack{1, 2}, std::nullopt},
               {1, "a-very-long-process-name-of-40-bytes....", Stack{1, 2}, std::nullopt}});
}

// Stacks that could not be stored merge into one (pid, comm, lost) key,
// however many distinct stacks were lost, and each event counts in lost().
TEST(AggregateStackCountsTest, LostStacksMergeIntoOneKey) {
  StackCounts c(1, 16);
  c.add(1, "a", Stack{1}, std::nullopt, 1);
  c.add(1, "a", Stack{2}, std::nullopt, 1);
  c.add(1, "a", Stack{3}, std::nullopt, 1);
  c.add(1, "a", Stack{2}, std::nullopt, 1);
  c.add(1, "a", Stack{1}, std::nullopt, 1);
  EXPECT_EQ(rows(c), (std::vector<Row>{{1, "a", "1,", "none", 2}, {1, "a", "lost", "none", 3}}));
  EXPECT_EQ(c.stacks.lost(), 3u);
  EXPECT_EQ(c.signatures.size(), 1u);
}

// A new key in a full table is dropped on every event.
TEST(AggregateStackCountsTest, DroppedKeysCountEveryEvent) {
  StackCounts c(16, 1);
  EXPECT_TRUE(c.add(1, "a", Stack{1}, std::nullopt, 1));
  EXPECT_FALSE(c.add(2, "a", Stack{1}, std::nullopt, 1));
  EXPECT_FALSE(c.add(2, "a", Stack{1}, std::nullopt, 1));
  EXPECT_TRUE(c.add(1, "a", Stack{1}, std::nullopt, 4));
  EXPECT_EQ(rows(c), (std::vector<Row>{{1, "a", "1,", "none", 5}}));
  EXPECT_EQ(c.counts.dropped(), 2u);
}

// A stack first stored by a dropped key's event stays readable.
TEST(AggregateStackCountsTest, StackOfDroppedKeyStaysStored) {
  StackCounts c(16, 1);
  c.add(1, "a", Stack{1}, std::nullopt, 1);
  EXPECT_FALSE(c.add(2, "a", Stack{7, 8, 9}, std::nullopt, 1));
  EXPECT_FALSE(c.add(1, "a", Stack{7, 8, 9}, Stack{1}, 1));  // a new key: full
  ASSERT_EQ(c.stacks.size(), 2u);
  EXPECT_EQ(side_text(c, 1), "7,8,9,");
}

// add() and counts.add() of the same key (offcputime's path) share a total.
TEST(AggregateStackCountsTest, MixesWithCountsAdd) {
  StackCounts c(16, 16);
  const StackKey k{1, c.comms.intern("a"), c.side(Stack{1, 2}), kNoStack};
  c.counts.add(k, 10);
  c.add(1, "a", Stack{1, 2}, std::nullopt, 1);
  c.add(1, "a", Stack{1, 2}, std::nullopt, 1);
  EXPECT_EQ(rows(c), (std::vector<Row>{{1, "a", "1,2,", "none", 12}}));
}

// Random events, small tables: lost stacks and dropped keys on the way, in
// first-seen order through growth.
TEST(AggregateStackCountsTest, RandomAgainstTables) {
  std::mt19937_64 rng(11);
  std::vector<Stack> stacks;
  for (int i = 0; i < 300; ++i) {
    Stack s(rng() % 45);
    for (auto& f : s) f = 0xffffffff81000000 + rng() % 64;
    stacks.push_back(s);
  }
  const char* names[] = {"", "a", "bash", "kworker/1:2H", "containerd-shim-runc-v2"};
  for (auto [scap, kcap] : {std::pair<size_t, size_t>{1000, 100000}, {100, 100000}, {1000, 500},
                            {50, 200}}) {
    std::vector<Ev> evs;
    for (int i = 0; i < 20000; ++i) {
      Ev e{static_cast<uint32_t>(rng() % 4), names[rng() % 5], std::nullopt, std::nullopt,
           rng() % 100};
      if (rng() % 8) e.kernel = stacks[rng() % stacks.size()];
      if (rng() % 3) e.user = stacks[rng() % stacks.size()];
      evs.push_back(e);
    }
    SCOPED_TRACE(testing::Message() << "stacks " << scap << " keys " << kcap);
    expect_same(scap, kcap, evs);
  }
}

// Stacks that differ only in frames the quick hash does not read (it reads
// the first six of a stack longer than six): one quick hash for many
// signatures, which then live in the shared table, every lookup exact.
TEST(AggregateStackCountsTest, StacksApartOnlyWhereTheQuickHashDoesNotRead) {
  std::vector<Stack> stacks;
  for (uint64_t i = 0; i < 200; ++i) {
    Stack s(40, 0xffffffff81000000);
    for (size_t j = 0; j < s.size(); ++j) s[j] += j;
    s[6] += i % 20;   // positions 6 and 33: not 0-5
    s[33] += i / 20;
    stacks.push_back(s);
  }
  std::mt19937_64 rng(5);
  std::vector<Ev> evs;
  for (int i = 0; i < 20000; ++i) {
    Ev e{1, "a", stacks[rng() % stacks.size()], std::nullopt, 1};
    if (rng() % 2) e.user = stacks[rng() % 7];
    evs.push_back(e);
  }
  expect_same(100000, 100000, evs);
  StackCounts c(100000, 100000);
  for (const Ev& e : evs) c.add(e.pid, e.comm, view(e.kernel), view(e.user), e.value);
  EXPECT_EQ(c.signatures.size(), c.counts.size());
  EXPECT_EQ(c.signatures.size(), c.signatures.shared());  // all behind a few quick hashes
}

// Every signature with one quick hash: the table must still tell them
// apart, through growth.
uint64_t constant_hash(const Signature&) { return 99; }

// Each test runs with each compare (SignatureTable::Isa): the best this
// processor has, and the baseline's.
class AggregateSignatureTableTest
    : public testing::TestWithParam<std::tuple<bool, SignatureTable::Isa>> {
 protected:
  // With a constant full hash too, only the compare tells signatures apart.
  SignatureTable::FullHash full() const {
    return std::get<0>(GetParam()) ? &constant_hash : &SignatureTable::full_hash;
  }
  SignatureTable table() const {
    SignatureTable t(full(), std::get<1>(GetParam()));
    if (std::get<1>(GetParam()) == SignatureTable::Isa::kBaseline) {
      EXPECT_FALSE(t.avx2());
    } else {
      EXPECT_EQ(t.avx2(), SignatureTable::has_avx2());
      if (!t.avx2()) std::printf("no AVX2 on this processor: Best is the baseline\n");
    }
    return t;
  }
};

INSTANTIATE_TEST_SUITE_P(
    FullHashAndIsa, AggregateSignatureTableTest,
    testing::Combine(testing::Values(false, true),
                     testing::Values(SignatureTable::Isa::kBest, SignatureTable::Isa::kBaseline)),
    [](const testing::TestParamInfo<std::tuple<bool, SignatureTable::Isa>>& i) {
      return std::string(std::get<0>(i.param) ? "Constant" : "Real") +
             (std::get<1>(i.param) == SignatureTable::Isa::kBest ? "Best" : "Baseline");
    });

TEST_P(AggregateSignatureTableTest, ForcedCollisions) {
  SignatureTable t = table();
  std::vector<Stack> frames;
  for (uint64_t i = 0; i < 500; ++i) frames.push_back(Stack(1 + i % 7, i));  // all different
  auto sig = [&](uint64_t i) {
    return Signature{static_cast<uint32_t>(i % 3), i % 2 ? "x" : "", frames[i], frames[(i * 7) % 500]};
  };
  constexpr uint64_t kHash = 42;
  for (uint64_t i = 0; i < 500; ++i) {
    ASSERT_EQ(t.find(sig(i), kHash), SignatureTable::kAbsent) << i;
    t.insert(t.stage(sig(i)), kHash, static_cast<uint32_t>(i));
  }
  EXPECT_EQ(t.size(), 500u);
  EXPECT_EQ(t.shared(), 500u);
  for (uint64_t i = 0; i < 500; ++i) EXPECT_EQ(t.find(sig(i), kHash), i);
  EXPECT_EQ(t.find(Signature{9, "x", frames[1], frames[2]}, kHash), SignatureTable::kAbsent);
}

// One quick hash for all again (and with Constant one full hash), so only
// the compare tells them apart: names of
// every length up to 24 bytes and stacks of every length up to 21 frames,
// each variant differing from the base in a single byte or frame (the
// compare reads short names and stack tails with overlapping loads, and
// stacks eight frames at a time).
TEST_P(AggregateSignatureTableTest, ForcedCollisionsOneByteOrFrameApart) {
  SignatureTable t = table();
  constexpr uint64_t kHash = 7;
  std::vector<std::string> names;
  std::vector<Stack> stacks;
  for (size_t n = 0; n <= 24; ++n) {
    const std::string base(n, 'a');
    names.push_back(base);
    for (size_t i = 0; i < n; ++i) names.push_back(std::string(base).replace(i, 1, "b"));
  }
  for (size_t n = 0; n <= 21; ++n) {
    const Stack base(n, 0xffffffff81000000);
    stacks.push_back(base);
    for (size_t i = 0; i < n; ++i) {
      Stack v = base;
      v[i] ^= uint64_t{1} << (i % 64);
      stacks.push_back(v);
    }
  }
  std::vector<Signature> sigs;
  for (const auto& n : names) sigs.push_back(Signature{1, n, {}, {}});
  for (const auto& k : stacks) sigs.push_back(Signature{1, "x", k, {}});
  const Stack other{42};  // not among stacks: no user-side variant repeats a kernel-side one
  for (const auto& u : stacks) sigs.push_back(Signature{1, "x", other, u});
  for (uint32_t i = 0; i < sigs.size(); ++i) {
    ASSERT_EQ(t.find(sigs[i], kHash), SignatureTable::kAbsent) << i;
    t.insert(t.stage(sigs[i]), kHash, i);
  }
  for (uint32_t i = 0; i < sigs.size(); ++i) EXPECT_EQ(t.find(sigs[i], kHash), i) << i;
}

TEST(AggregateSignatureTableDiscardTest, DiscardGivesTheWordsBack) {
  SignatureTable t;
  const Stack k{1, 2, 3};
  const Signature s{1, "a", k, {}};
  const auto a = t.stage(s);
  t.discard(a);
  const auto b = t.stage(s);
  EXPECT_EQ(a.record, b.record);
  t.insert(b, SignatureTable::hash(s), 7);
  EXPECT_EQ(t.find(s, SignatureTable::hash(s)), 7u);
}

TEST(AggregateArenaTest, ReleaseLastReusesWords) {
  Arena a;
  uint64_t* p = a.allocate(10);
  a.release_last(p, 10);
  EXPECT_EQ(a.allocate(10), p);
  uint64_t* big = a.allocate(100000);  // a chunk of its own
  big[99999] = 1;
  a.release_last(big, 100000);
  EXPECT_EQ(a.allocate(4), p + 10);
}

// adopt() keeps the caller's record for a new stack and sets its id.
TEST(AggregateStackTableTest, AdoptStoresTheRecordItself) {
  StackTable t(2);
  uint64_t r1[] = {2, 10, 11};
  uint64_t r2[] = {2, 10, 11};
  uint64_t r3[] = {1, 12};
  uint64_t r4[] = {1, 13};
  EXPECT_EQ(t.adopt(r1), 0);
  EXPECT_EQ(t.frames(0).data(), r1 + 1);
  EXPECT_EQ(t.adopt(r2), 0);  // already there: not adopted
  EXPECT_EQ(r2[0], 2u);
  EXPECT_EQ(t.intern(Stack{12}), 1);
  EXPECT_EQ(t.adopt(r3), 1);
  EXPECT_EQ(r3[0], uint64_t{1} << 32 | 1);
  EXPECT_EQ(t.adopt(r4), kStackLost);
  EXPECT_EQ(t.lost(), 1u);
  EXPECT_EQ(t.intern(Stack{10, 11}), 0);
}

}  // namespace
}  // namespace tracekit::aggregate
