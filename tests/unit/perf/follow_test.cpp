// The listing loop of perf::follow_threads with a fake /proc and fake
// opens, and FollowedThreads' duplicate test.
#include "perf/follow.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <map>

namespace tracekit::perf {
namespace {

struct Fake {
  std::vector<std::vector<int>> listings;  // one per call; the last repeats
  size_t calls = 0;
  std::map<int, int> fail;                   // tid -> errno of its open
  std::vector<std::pair<int, bool>> opened;  // tid, ids asked
  std::function<void(int)> on_open;          // threads appearing while opening

  std::vector<int> list() {
    auto l = listings[std::min(calls, listings.size() - 1)];
    ++calls;
    return l;
  }
  Status open(int tid, std::vector<uint64_t>* ids) {
    opened.push_back({tid, ids != nullptr});
    if (on_open) on_open(tid);
    if (auto it = fail.find(tid); it != fail.end()) return Error{it->second, "open", {}, {}};
    if (ids) ids->push_back(static_cast<uint64_t>(tid) * 10);
    return {};
  }
  Result<FollowedThreads> run(int pid) {
    return follow_threads(
        pid, [this] { return list(); },
        [this](int tid, std::vector<uint64_t>* ids) { return open(tid, ids); });
  }
};

TEST(FollowThreadsTest, StableListingOpensEachThreadOnce) {
  Fake f;
  f.listings = {{10, 11}};
  auto r = f.run(10);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(f.opened, (std::vector<std::pair<int, bool>>{{10, false}, {11, false}}));
  EXPECT_EQ(r->late(), 0u);
  EXPECT_EQ(f.calls, 2u);  // listed again: nothing new
}

TEST(FollowThreadsTest, LateThreadsGetTheirOwnEventsAndIds) {
  Fake f;
  f.listings = {{10}, {10, 12}, {10, 12, 13}};
  auto r = f.run(10);
  ASSERT_TRUE(r) << r.error().str();
  EXPECT_EQ(f.opened, (std::vector<std::pair<int, bool>>{{10, false}, {12, true}, {13, true}}));
  EXPECT_EQ(r->late(), 2u);
  // A late thread's samples count from its own events only.
  EXPECT_FALSE(r->duplicate(12, 120));
  EXPECT_TRUE(r->duplicate(12, 999));
  EXPECT_FALSE(r->duplicate(10, 999));  // threads of the first listing: never
  EXPECT_FALSE(r->duplicate(77, 999));  // threads started afterwards: inherited only
}

TEST(FollowThreadsTest, ThreadsThatExitedAreSkipped) {
  Fake f;
  f.listings = {{10, 11}};
  f.fail[11] = ESRCH;
  auto r = f.run(10);
  ASSERT_TRUE(r) << r.error().str();
  f.fail[10] = ESRCH;
  f.calls = 0;
  auto gone = f.run(10);
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().message, "no process with PID 10");
}

TEST(FollowThreadsTest, NoProcessAndOtherErrors) {
  Fake none;
  none.listings = {{}};
  auto r = none.run(5);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().message, "no process with PID 5");

  Fake busy;
  busy.listings = {{10}};
  busy.fail[10] = EMFILE;
  auto e = busy.run(10);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().err, EMFILE);
}

TEST(FollowThreadsTest, EndlessNewThreadsStopAfterTheRoundLimit) {
  Fake f;
  int next = 100;
  f.listings = {{10}};
  std::vector<int> now{10};
  f.on_open = [&](int) { now.push_back(next++); };
  auto r = follow_threads(
      10, [&] { return now; },
      [&](int tid, std::vector<uint64_t>* ids) { return f.open(tid, ids); });
  ASSERT_TRUE(r);
  EXPECT_LE(f.opened.size(), static_cast<size_t>(kMaxFollowRounds) * 2);
}

TEST(FollowedThreadsTest, OwnIdsAccumulate) {
  FollowedThreads t;
  t.own(5, {1, 2});
  t.own(5, {3});
  EXPECT_FALSE(t.duplicate(5, 3));
  EXPECT_TRUE(t.duplicate(5, 4));
  EXPECT_EQ(t.late(), 1u);
}

}  // namespace
}  // namespace tracekit::perf
