#include "offcpu/pairing.hpp"

#include <gtest/gtest.h>

namespace tracekit::offcpu {
namespace {

Start at(uint64_t t, aggregate::StackId k = 1) {
  Start s;
  s.time = t;
  s.tgid = 100;
  s.kernel = k;
  return s;
}

TEST(OffcpuPairerTest, PeriodRunsFromSwitchOutToNextSwitchIn) {
  Pairer p;
  p.switch_out(7, at(1000, 3));
  auto period = p.switch_in(7, 21000);
  ASSERT_TRUE(period);
  EXPECT_EQ(period->tid, 7u);
  EXPECT_EQ(period->duration_ns(), 20000u);
  EXPECT_EQ(period->start.kernel, 3);
  EXPECT_EQ(p.open(), 0u);
  EXPECT_FALSE(p.switch_in(7, 30000));  // only once
}

TEST(OffcpuPairerTest, SwitchInWithoutSwitchOutIsIgnored) {
  Pairer p;
  EXPECT_FALSE(p.switch_in(9, 5000));  // blocked before the trace began
}

TEST(OffcpuPairerTest, MissedSwitchInIsReplacedNotInflated) {
  Pairer p;
  p.switch_out(7, at(1000));
  p.switch_out(7, at(50000));  // its switch-in was lost
  auto period = p.switch_in(7, 60000);
  ASSERT_TRUE(period);
  EXPECT_EQ(period->duration_ns(), 10000u);
}

// Without switch records (kernels before 4.3): a period whose switch-in was
// missed ends at its first wake-up, once the next switch-out (counted or
// not) shows the thread ran; a seen switch-in still ends it as before.
TEST(OffcpuPairerTest, MissedSwitchInEndsAtTheFirstWakeup) {
  Pairer p;
  EXPECT_FALSE(p.switch_out(7, at(1000)));
  p.wakeup(7, 21000);
  p.wakeup(7, 22000);  // a second wake-up of the same period changes nothing
  auto period = p.switch_out(7, at(50000));
  ASSERT_TRUE(period);
  EXPECT_EQ(period->start.time, 1000u);
  EXPECT_EQ(period->end, 21000u);
  p.wakeup(7, 60000);
  period = p.ignore(7);  // not counted itself, but the period before it ends
  ASSERT_TRUE(period);
  EXPECT_EQ(period->duration_ns(), 10000u);

  p.switch_out(8, at(1000));
  p.wakeup(8, 5000);
  period = p.switch_in(8, 7000);  // the switch-in was seen: it ends the period
  ASSERT_TRUE(period);
  EXPECT_EQ(period->end, 7000u);
  EXPECT_FALSE(p.switch_out(8, at(9000)));
  p.wakeup(9, 100);  // a thread with no open period: nothing
  EXPECT_FALSE(p.switch_out(9, at(200)));
}

TEST(OffcpuPairerTest, IgnoredSwitchOutForgetsAnOlderPeriod) {
  // A task that exited (or no longer passes a filter) leaves no open period
  // for a new task that reuses its tid.
  Pairer p;
  p.switch_out(7, at(1000));
  p.ignore(7);
  EXPECT_FALSE(p.switch_in(7, 90000));
}

TEST(OffcpuPairerTest, ResetDropsEveryOpenPeriod) {
  Pairer p;
  p.switch_out(1, at(10));
  p.switch_out(2, at(20));
  p.reset();
  EXPECT_EQ(p.open(), 0u);
  EXPECT_FALSE(p.switch_in(1, 100));
  EXPECT_FALSE(p.switch_in(2, 100));
}

TEST(OffcpuPairerTest, TimeGoingBackwardsIsIgnored) {
  Pairer p;
  p.switch_out(1, at(500));
  EXPECT_FALSE(p.switch_in(1, 400));
}

SchedEvent out(uint64_t t, uint32_t tid) {
  SchedEvent e;
  e.kind = SchedEvent::kSwitchOut;
  e.time = t;
  e.tid = tid;
  e.counted = true;
  e.start = at(t);
  return e;
}

SchedEvent in(uint64_t t, uint32_t tid) {
  SchedEvent e;
  e.kind = SchedEvent::kSwitchIn;
  e.time = t;
  e.tid = tid;
  return e;
}

// The pairing a tracer does: TimeOrder feeding Pairer.
std::vector<Period> pair(TimeOrder& order, Pairer& p, uint64_t horizon) {
  std::vector<Period> done;
  order.release(horizon, [&](const SchedEvent& e) {
    if (e.kind == SchedEvent::kSwitchOut)
      p.switch_out(e.tid, e.start);
    else if (auto period = p.switch_in(e.tid, e.time))
      done.push_back(*period);
  });
  return done;
}

TEST(OffcpuTimeOrderTest, MigrationAcrossRingsPairsInTimeOrder) {
  // The task blocks on CPU 0 at t=100 and wakes on CPU 1 at t=300; CPU 1's
  // ring is read first.
  TimeOrder order;
  Pairer p;
  order.push(in(300, 7));   // from CPU 1's ring
  order.push(out(100, 7));  // from CPU 0's ring
  auto done = pair(order, p, 1000);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].duration_ns(), 200u);
}

TEST(OffcpuTimeOrderTest, EventsPastTheHorizonWaitForTheNextPass) {
  TimeOrder order;
  Pairer p;
  order.push(out(100, 7));
  order.push(in(900, 7));
  auto first = pair(order, p, 500);  // the switch-in is held back
  EXPECT_TRUE(first.empty());
  EXPECT_EQ(order.size(), 1u);
  order.push(out(950, 8));
  auto second = pair(order, p, 2000);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].duration_ns(), 800u);
  EXPECT_EQ(order.size(), 0u);
}

TEST(OffcpuTimeOrderTest, EqualTimesKeepArrivalOrder) {
  TimeOrder order;
  order.push(out(100, 1));
  order.push(in(100, 1));
  std::vector<SchedEvent::Kind> kinds;
  order.release_all([&](const SchedEvent& e) { kinds.push_back(e.kind); });
  ASSERT_EQ(kinds.size(), 2u);
  EXPECT_EQ(kinds[0], SchedEvent::kSwitchOut);
  EXPECT_EQ(kinds[1], SchedEvent::kSwitchIn);
}

TEST(OffcpuTimeOrderTest, LostRecordsInTheMiddle) {
  // out(7)@100, [lost: in(7)@200, out(7)@300], in(7)@400. The tracer flushes
  // what came before the loss and resets: nothing is counted for 7, rather
  // than a 300 ns period that includes its time on-CPU.
  TimeOrder order;
  Pairer p;
  order.push(out(100, 7));
  auto before = pair(order, p, UINT64_MAX);
  EXPECT_TRUE(before.empty());
  p.reset();
  order.push(in(400, 7));
  EXPECT_TRUE(pair(order, p, UINT64_MAX).empty());
}

}  // namespace
}  // namespace tracekit::offcpu
