// Pairing of block request events, from fabricated event sequences: the
// cases where a table keyed by dev+sector alone (perf-tools' awk) mispairs.
#include "family/block/pairing.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tracekit::block {
namespace {

constexpr uint32_t kDev = 7u << 20;  // 7,0

Event ev(Kind k, uint64_t ts, uint64_t sector, uint32_t nr, int pid = 0, const char* comm = "",
         const char* rwbs = "R", uint32_t dev = kDev) {
  Event e;
  e.kind = k;
  e.ts = ts;
  e.dev = dev;
  e.sector = sector;
  e.nr_sector = nr;
  e.bytes = (k == Kind::kComplete || k == Kind::kRequeue) ? 0 : nr * 512;
  e.rwbs = rwbs;
  e.pid = pid;
  e.comm = comm;
  return e;
}

struct Collected {
  std::vector<Io> ios;
  Pairer::Done done() {
    return [this](const Io& io) { ios.push_back(io); };
  }
};

TEST(IosnoopPairingTest, IssueThenCompletePairs) {
  Pairer p(false);
  Collected r;
  p.feed(
      {ev(Kind::kIssue, 1000, 64, 8, 42, "dd", "W"), ev(Kind::kComplete, 51000, 64, 8, 0, "", "W")},
      r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 1000u);
  EXPECT_EQ(r.ios[0].end_ts, 51000u);
  EXPECT_EQ(r.ios[0].sector, 64u);
  EXPECT_EQ(r.ios[0].bytes, 4096u);
  EXPECT_EQ(r.ios[0].pid, 42);
  EXPECT_EQ(r.ios[0].comm, "dd");
  EXPECT_EQ(r.ios[0].rwbs, "W");
  EXPECT_EQ(p.pending(), 0u);
  EXPECT_EQ(p.stats().completed, 1u);
}

TEST(IosnoopPairingTest, CompletionReadBeforeItsIssueFromAnotherCpuStillPairs) {
  Pairer p(false);
  Collected r;
  // CPU 1's completion is read in one pass, CPU 0's issue (earlier) in the next.
  p.feed({ev(Kind::kComplete, 2000, 8, 8)}, r.done());
  EXPECT_TRUE(r.ios.empty());
  p.feed({ev(Kind::kIssue, 1500, 8, 8, 5, "dd")}, r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 1500u);
  EXPECT_EQ(r.ios[0].pid, 5);
  EXPECT_EQ(p.stats().unmatched, 0u);
}

TEST(IosnoopPairingTest, CompletionWithoutStartIsCountedAfterOneMorePass) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kComplete, 2000, 8, 8)}, r.done());
  p.feed({}, r.done());
  EXPECT_EQ(p.stats().unmatched, 1u);
  p.feed({ev(Kind::kComplete, 3000, 16, 8)}, r.done());
  p.finish(r.done());
  EXPECT_EQ(p.stats().unmatched, 2u);
  EXPECT_TRUE(r.ios.empty());
}

TEST(IosnoopPairingTest, SameTimestampStartsBeforeCompletes) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kComplete, 1000, 8, 8), ev(Kind::kIssue, 1000, 8, 8)}, r.done());
  EXPECT_EQ(r.ios.size(), 1u);
}

TEST(IosnoopPairingTest, QueueModeStartsAtInsertAndIgnoresItsIssue) {
  Pairer p(true);
  Collected r;
  p.feed({ev(Kind::kInsert, 100, 0, 8, 7, "dd"), ev(Kind::kIssue, 900, 0, 8, 99, "kworker/0:1"),
          ev(Kind::kComplete, 1000, 0, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 100u);
  EXPECT_EQ(r.ios[0].pid, 7);
  EXPECT_TRUE(r.ios[0].queued);
}

TEST(IosnoopPairingTest, QueueModeIssueWithoutInsertStartsTheIo) {
  // blk-mq without a scheduler issues directly: no insert (perf-tools -Q
  // shows nothing then).
  Pairer p(true);
  Collected r;
  p.feed({ev(Kind::kIssue, 500, 0, 8, 7, "dd"), ev(Kind::kComplete, 1000, 0, 8)}, r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 500u);
  EXPECT_FALSE(r.ios[0].queued);
}

TEST(IosnoopPairingTest, IssueModeIgnoresInserts) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kInsert, 100, 0, 8, 7, "dd"), ev(Kind::kIssue, 900, 0, 8, 7, "dd"),
          ev(Kind::kComplete, 1000, 0, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 900u);
}

TEST(IosnoopPairingTest, RequeuedIoKeepsItsFirstStartAndTask) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kIssue, 100, 32, 8, 42, "dd"), ev(Kind::kRequeue, 200, 32, 8),
          ev(Kind::kIssue, 700, 32, 8, 99, "kworker/1:1H"), ev(Kind::kComplete, 1100, 32, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 100u);  // perf-tools: 700, and kworker's
  EXPECT_EQ(r.ios[0].pid, 42);
  EXPECT_EQ(r.ios[0].comm, "dd");
  EXPECT_EQ(p.stats().requeued, 1u);
  EXPECT_EQ(p.stats().replaced, 0u);
}

TEST(IosnoopPairingTest, RequeueInQueueModeWaitsForTheReinsert) {
  Pairer p(true);
  Collected r;
  p.feed({ev(Kind::kInsert, 100, 32, 8, 42, "dd"), ev(Kind::kIssue, 150, 32, 8, 42, "dd"),
          ev(Kind::kRequeue, 200, 32, 8), ev(Kind::kInsert, 300, 32, 8, 99, "kworker"),
          ev(Kind::kIssue, 400, 32, 8, 99, "kworker"), ev(Kind::kComplete, 500, 32, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 100u);
  EXPECT_EQ(r.ios[0].pid, 42);
  EXPECT_EQ(p.pending(), 0u);
}

TEST(IosnoopPairingTest, SplitCompletionIsOneIoOfAllItsBytes) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kIssue, 100, 0, 16, 3, "fio"), ev(Kind::kComplete, 200, 0, 8),
          ev(Kind::kComplete, 300, 8, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].bytes, 8192u);
  EXPECT_EQ(r.ios[0].end_ts, 300u);
  EXPECT_EQ(r.ios[0].sector, 0u);
  EXPECT_EQ(p.stats().split, 1u);
  EXPECT_EQ(p.pending(), 0u);
}

TEST(IosnoopPairingTest, BackMergeAfterInsertCompletesWithMoreBytesAndForgetsTheMerged) {
  Pairer p(true);
  Collected r;
  // Two requests inserted; the second is merged into the first
  // (block_rq_merge) and never completes on its own.
  p.feed({ev(Kind::kInsert, 100, 0, 8, 3, "a"), ev(Kind::kInsert, 110, 8, 8, 4, "b"),
          ev(Kind::kIssue, 150, 0, 16, 0, "kworker"), ev(Kind::kComplete, 300, 0, 16)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].bytes, 8192u);
  EXPECT_EQ(r.ios[0].pid, 3);
  EXPECT_EQ(p.stats().merged, 1u);
  EXPECT_EQ(p.pending(), 0u);  // perf-tools keeps sector 8's start forever
}

TEST(IosnoopPairingTest, FrontMergedRequestPairsByRange) {
  Pairer p(true);
  Collected r;
  // Inserted at 8; a bio front-merged makes the request start at 0.
  p.feed({ev(Kind::kInsert, 100, 8, 8, 3, "a"), ev(Kind::kIssue, 150, 0, 16, 0, "kworker"),
          ev(Kind::kComplete, 300, 0, 16)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 100u);
  EXPECT_EQ(r.ios[0].pid, 3);
  EXPECT_EQ(r.ios[0].sector, 0u);
  EXPECT_EQ(r.ios[0].bytes, 8192u);
  EXPECT_EQ(p.stats().front_merged, 1u);
  EXPECT_EQ(p.pending(), 0u);
}

TEST(IosnoopPairingTest, LaterStartInsideARangeIsNotTakenAsMerged) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kIssue, 100, 0, 16, 1, "a"), ev(Kind::kIssue, 400, 8, 8, 2, "b"),
          ev(Kind::kComplete, 300, 0, 16), ev(Kind::kComplete, 500, 8, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 2u);
  EXPECT_EQ(r.ios[1].pid, 2);
  EXPECT_EQ(p.stats().merged, 0u);
}

TEST(IosnoopPairingTest, ResetAfterLostEventsForgetsPendingStarts) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kIssue, 100, 0, 8, 1, "a")}, r.done());
  p.reset();
  p.feed({ev(Kind::kComplete, 5000, 0, 8)}, r.done());
  p.finish(r.done());
  EXPECT_TRUE(r.ios.empty());
  EXPECT_EQ(p.stats().resets, 1u);
  EXPECT_EQ(p.stats().unmatched, 1u);
}

TEST(IosnoopPairingTest, StartWhoseCompletionWasLostIsReplaced) {
  Pairer p(false);
  Collected r;
  p.feed({ev(Kind::kIssue, 100, 0, 8, 1, "a"), ev(Kind::kIssue, 2000, 0, 8, 2, "b"),
          ev(Kind::kComplete, 2100, 0, 8)},
         r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].start_ts, 2000u);
  EXPECT_EQ(r.ios[0].pid, 2);
  EXPECT_EQ(p.stats().replaced, 1u);
}

TEST(IosnoopPairingTest, DevicesArePairedApart) {
  Pairer p(false);
  Collected r;
  const uint32_t other = (8u << 20) | 1;
  p.feed({ev(Kind::kIssue, 100, 0, 8, 1, "a", "R", other), ev(Kind::kComplete, 200, 0, 8)},
         r.done());
  p.finish(r.done());
  EXPECT_TRUE(r.ios.empty());
  EXPECT_EQ(p.stats().unmatched, 1u);
  EXPECT_EQ(p.pending(), 1u);
}

TEST(IosnoopPairingTest, FlushWithoutSectorsUsesIssuedBytes) {
  Pairer p(false);
  Collected r;
  Event issue = ev(Kind::kIssue, 100, 0, 0, 1, "jbd2", "FF");
  issue.bytes = 0;
  p.feed({issue, ev(Kind::kComplete, 200, 0, 0, 0, "", "FF")}, r.done());
  ASSERT_EQ(r.ios.size(), 1u);
  EXPECT_EQ(r.ios[0].bytes, 0u);
  EXPECT_EQ(r.ios[0].rwbs, "FF");
}

}  // namespace
}  // namespace tracekit::block
