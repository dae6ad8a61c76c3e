#include "offcputime/pairing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

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
  EXPECT_EQ(p.unended(), 1u);  // the first period, not counted
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
  EXPECT_EQ(p.unended(), 0u);  // every period ended, by a switch-in or a wake-up
}

TEST(OffcpuPairerTest, IgnoredSwitchOutForgetsAnOlderPeriod) {
  // A task that exited (or no longer passes a filter) leaves no open period
  // for a new task that reuses its tid.
  Pairer p;
  p.switch_out(7, at(1000));
  p.ignore(7);
  EXPECT_FALSE(p.switch_in(7, 90000));
  EXPECT_EQ(p.unended(), 1u);
  p.ignore(8);  // nothing open: nothing forgotten
  EXPECT_EQ(p.unended(), 1u);
}

TEST(OffcpuPairerTest, ResetDropsEveryOpenPeriod) {
  Pairer p;
  p.switch_out(1, at(10));
  p.switch_out(2, at(20));
  p.reset();
  EXPECT_EQ(p.open(), 0u);
  EXPECT_EQ(p.unended(), 0u);  // reported as lost records instead
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

// Against the plain way (every held event stably sorted by time each pass):
// rings of events in time order (now and then one out of order, ties
// common), read in passes whose horizons hold some back; from 1 to 100 rings
// a pass, so both the run merge and its fallback to a stable sort (more
// than 64 runs) are taken. tid is each event's arrival number.
TEST(OffcpuTimeOrderTest, PassesReleaseWhatAStableSortWould) {
  std::mt19937_64 rng(14);
  const auto earlier = [](const SchedEvent& a, const SchedEvent& b) { return a.time < b.time; };
  for (size_t rings : {1, 2, 3, 8, 65, 100}) {
    TimeOrder order;
    std::vector<SchedEvent> held;  // the plain way's
    uint64_t now = 1000;
    uint32_t arrival = 0;
    size_t total = 0;
    for (int pass = 0; pass <= 20; ++pass) {
      for (size_t r = 0; r < rings && pass < 20; ++r) {
        uint64_t t = now;
        for (size_t k = rng() % 40; k > 0; --k) {
          t += rng() % 4;
          const SchedEvent e = in(rng() % 50 == 0 ? t - 3 : t, arrival++);
          order.push(e);
          held.push_back(e);
        }
      }
      now += 60;
      const uint64_t horizon = pass < 20 ? now - 30 : UINT64_MAX;
      std::stable_sort(held.begin(), held.end(), earlier);
      size_t n = 0;
      while (n < held.size() && held[n].time <= horizon) ++n;
      std::vector<uint32_t> want;
      for (size_t i = 0; i < n; ++i) want.push_back(held[i].tid);
      held.erase(held.begin(), held.begin() + static_cast<ptrdiff_t>(n));
      std::vector<uint32_t> got;
      order.release(horizon, [&](const SchedEvent& e) { got.push_back(e.tid); });
      ASSERT_EQ(got, want) << rings << " rings, pass " << pass;
      ASSERT_EQ(order.size(), held.size());
      total += got.size();
    }
    EXPECT_EQ(total, arrival);
    EXPECT_EQ(order.size(), 0u);
  }
}

// SwitchChains: switch records where a CPU's sched_switch misses switches.
using Action = SwitchChains::Action;

// CPU 0 goes idle twice, visibly, and comes back to last at time 40: it
// loses its records.
void drop_records_after_idle_exits(SwitchChains& c, uint32_t last) {
  c.link(0, 5, 0, 10, true);
  c.link(0, 0, 6, 20, true);
  c.link(0, 6, 0, 30, true);
  ASSERT_EQ(c.link(0, 0, last, 40, true).action, Action::kDropRecords);
}

TEST(OffcpuSwitchChainsTest, IdleExitsSeenDropTheRecords) {
  SwitchChains c(2);
  EXPECT_EQ(c.link(0, 5, 0, 10, true).action, Action::kNone);  // first: no chain yet
  EXPECT_EQ(c.link(0, 0, 6, 20, true).action, Action::kNone);  // one idle exit
  EXPECT_EQ(c.link(0, 6, 0, 30, true).action, Action::kNone);
  EXPECT_EQ(c.link(0, 0, 7, 40, true).action, Action::kDropRecords);  // the second
  EXPECT_EQ(c.link(0, 7, 8, 50, false).action, Action::kNone);
  EXPECT_EQ(c.missed(), 0u);
}

TEST(OffcpuSwitchChainsTest, BusyCpuDropsTheRecordsAfterEnoughSwitches) {
  SwitchChains c(1);
  uint32_t a = 5, b = 6;
  c.link(0, a, b, 0, true);
  for (uint32_t i = 1; i < SwitchChains::kProofLinks; ++i) {
    EXPECT_EQ(c.link(0, b, a, i, true).action, Action::kNone) << i;
    std::swap(a, b);
  }
  EXPECT_EQ(c.link(0, b, a, 5000, true).action, Action::kDropRecords);
}

// The 6.18 VM's CPU 1: no switch out of idle ever shows. The CPU keeps its
// records; nothing is missed while it has them.
TEST(OffcpuSwitchChainsTest, MissedIdleExitsKeepTheRecordsForGood) {
  SwitchChains c(2);
  c.link(1, 5, 0, 10, true);
  auto l = c.link(1, 6, 7, 20, true);  // 0 -> 6 went missing
  EXPECT_EQ(l.action, Action::kNone);
  EXPECT_FALSE(l.missed_since);
  uint32_t a = 7, b = 8;
  for (uint32_t i = 0; i < 2 * SwitchChains::kProofLinks; ++i) {
    EXPECT_EQ(c.link(1, a, b, 100 + i, true).action, Action::kNone) << i;
    std::swap(a, b);
  }
  EXPECT_EQ(c.missed(), 0u);
}

// A thread whose switches do not show (a switch to it does, the one away
// from it not): on a CPU without records the next task's switch-in is
// missed; it is taken at the last switch shown (the period ends early, never
// late), and the records come back until the CPU proves itself again.
TEST(OffcpuSwitchChainsTest, MissedSwitchInWithoutRecordsEndsAtTheLastSwitchSeen) {
  SwitchChains c(1);
  drop_records_after_idle_exits(c, 70);
  auto l = c.link(0, 8, 9, 90, false);  // 70 -> 8 went missing
  EXPECT_EQ(l.action, Action::kRestoreRecords);
  ASSERT_TRUE(l.missed_since);
  EXPECT_EQ(*l.missed_since, 40u);
  EXPECT_EQ(c.missed(), 1u);
  // 70 -> idle going missing loses no switch-in.
  c.link(0, 9, 70, 100, true);
  l = c.link(0, 0, 10, 110, true);
  EXPECT_EQ(l.action, Action::kNone);
  EXPECT_FALSE(l.missed_since);
  c.link(0, 10, 0, 120, true);
  c.link(0, 0, 11, 130, true);
  c.link(0, 11, 0, 140, true);
  EXPECT_EQ(c.link(0, 0, 12, 150, true).action, Action::kDropRecords);  // proved again
  EXPECT_EQ(c.missed(), 1u);
}

TEST(OffcpuSwitchChainsTest, LostRecordsRestartTheChain) {
  SwitchChains c(1);
  drop_records_after_idle_exits(c, 7);
  c.lost(0);
  auto l = c.link(0, 9, 10, 90, false);  // not a break: the gap hid the switches
  EXPECT_EQ(l.action, Action::kNone);
  EXPECT_FALSE(l.missed_since);
  EXPECT_EQ(c.missed(), 0u);
}

}  // namespace
}  // namespace tracekit::offcpu
