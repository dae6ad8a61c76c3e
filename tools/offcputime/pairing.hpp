// Off-CPU periods from scheduler events.
//
// A task's off-CPU period starts when it is switched out and ends at its next
// switch-in, on any CPU. Switch-outs come from sched:sched_switch samples
// (they carry the blocked stack and prev_state); switch-ins come from perf's
// own context-switch records (PERF_RECORD_SWITCH_CPU_WIDE, attr.context_switch),
// written by the scheduler's perf hooks. The tracepoint alone is not enough:
// some kernels do not emit sched_switch when a CPU leaves its idle task (seen
// on a 6.18 VM: none at all for CPU 1, to perf or to ftrace), so a task woken
// onto that idle CPU would have no switch-in; the switch records are complete.
// Kernels before 4.3 have no switch records: there the switch-ins are the
// sampled sched_switch's next_pid, and sched:sched_wakeup is sampled too. A
// period whose switch-in the tracepoint missed (the woken thread went onto an
// idle CPU, which is where the 6.18 VM reports no switch) ends at its first
// wake-up instead, when its thread's next switch-out shows that it ran: on
// an idle CPU the woken thread runs at once, so the two times are close.
//
// Events arrive in per-CPU rings, so a task that migrates has its switch-out
// in one ring and its switch-in in another: TimeOrder merges the events of
// all rings into time order before Pairer matches them. Only periods that
// begin and end inside the trace count: a switch-in without a recorded
// switch-out is ignored, and periods still open at the end are dropped. When
// the kernel reports lost records, every open period is dropped (its end, or
// a newer start, may be what was lost), so a loss can only shorten the
// totals, never inflate them.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "aggregate/stack_table.hpp"

namespace tracekit::offcpu {

// What is remembered of a task when it is switched out.
struct Start {
  uint64_t time = 0;  // ns
  uint32_t tgid = 0;
  uint32_t comm = 0;  // StringTable id
  aggregate::StackId kernel = aggregate::kNoStack;
  aggregate::StackId user = aggregate::kNoStack;
};

struct Period {
  uint32_t tid = 0;
  Start start;
  uint64_t end = 0;  // ns
  uint64_t duration_ns() const { return end - start.time; }
};

class Pairer {
 public:
  // tid went off-CPU; replaces an older open period of tid (its switch-in was
  // lost). Returns that older period when a wake-up ended it (wakeup()).
  std::optional<Period> switch_out(uint32_t tid, const Start& start);
  // tid went off-CPU but its period does not count (filtered out, or the
  // task is dead): forget any open period, so that a new task reusing the tid
  // does not inherit it. Returns the older period as switch_out() does.
  std::optional<Period> ignore(uint32_t tid);
  // tid came on-CPU at time: the period that ends, if one was open. A
  // switch-in before the switch-out it would pair with is ignored.
  std::optional<Period> switch_in(uint32_t tid, uint64_t time);
  // tid was woken at time (sched_wakeup): the end of its open period should
  // its switch-in never come. Only the first wake-up after a switch-out.
  void wakeup(uint32_t tid, uint64_t time);
  // Records were lost: drop every open period.
  void reset() {
    open_.clear();
    woken_.clear();
  }
  size_t open() const { return open_.size(); }
  // Open periods that a newer switch-out of their thread replaced or
  // ignore() forgot, with no switch-in or wake-up between: their switch-in
  // was never reported, so they were not counted.
  uint64_t unended() const { return unended_; }

 private:
  // The open period of tid that a wake-up ended, if any; forgets it.
  std::optional<Period> woken_period(uint32_t tid);
  std::unordered_map<uint32_t, Start> open_;
  std::unordered_map<uint32_t, uint64_t> woken_;  // first wake-up of an open period
  uint64_t unended_ = 0;
};

// Which CPUs need perf's switch records, for system-wide tracing.
//
// Two switch records per context switch cost the traced workload about a
// quarter of what offcputime adds (bench/offcputime_overhead.sh). Most
// switches do not need them: a sampled sched_switch gives both ends, prev's
// switch-out and next's switch-in, so switch-ins can come from next_pid.
// They are needed where the tracepoint misses switches. On the 6.18 VM it
// misses every switch made in some contexts: CPU 1's idle task (its switches
// out of idle) and some threads of other tasks (a switch to such a thread
// shows, the switch away from it does not). A miss shows as a break in the
// chain of one CPU's switches, where each sched_switch's prev is the
// previous one's next; the switch-in missed is the new prev's, none when
// that is the idle task.
//
// So every CPU starts with switch records (a dummy event per CPU writing into
// its ring), and a CPU loses them once its chain has held long enough with
// no break: kProofIdleExits switches out of the idle task or, on a CPU too
// busy to go idle, kProofLinks switches. A break gets the records back. A
// CPU whose switches out of idle went missing keeps them for the rest of the
// run (the idle times it would lose are long; the wake-ups that could stand
// for its idle exits cannot be had cheaper: perf samples nothing in that
// CPU's idle context, and ftrace's probes cost every CPU as much as the
// records, bench/README.md); after a thread's missed switch, the CPU has to
// prove itself again. A break on a CPU without
// records is a switch-in nothing reported, made between the last switch the
// CPU showed and the new prev's switch-out: Link::missed_since is the first,
// which ends the period early, never late (Pairer ignores it if the period
// began later). SwitchChains counts them (missed()). Duplicate switch-ins
// (next_pid and a switch record for one switch) are harmless: the second
// finds no open period.
class SwitchChains {
 public:
  static constexpr uint32_t kProofIdleExits = 2;
  static constexpr uint32_t kProofLinks = 1000;
  enum class Action : uint8_t { kNone, kDropRecords, kRestoreRecords };
  struct Link {
    Action action = Action::kNone;
    // A switch-in of prev was missed on a CPU without switch records: the
    // time it is taken to have been at (the last switch the CPU showed).
    std::optional<uint64_t> missed_since;
  };

  explicit SwitchChains(size_t cpus) : cpus_(cpus) {}
  // A sched_switch at time on CPU index cpu from prev to next (0: the idle
  // task); records: whether the CPU has switch records now.
  Link link(size_t cpu, uint32_t prev, uint32_t next, uint64_t time, bool records);
  // Records were lost on cpu: its chain restarts (no break to see).
  void lost(size_t cpu) { cpus_[cpu].last_next = kUnknown; }
  // Switch-ins missed on CPUs without switch records.
  uint64_t missed() const { return missed_; }

 private:
  static constexpr uint32_t kUnknown = UINT32_MAX;
  struct Cpu {
    uint32_t last_next = kUnknown;
    uint64_t last_time = 0;
    uint32_t idle_exits = 0;   // since the last break, each continuing the chain
    uint32_t links = 0;        // switches since the last break
    bool idle_misses = false;  // switches out of idle went missing: records for good
  };
  std::vector<Cpu> cpus_;
  uint64_t missed_ = 0;
};

// One scheduler event, as TimeOrder holds it.
struct SchedEvent {
  enum Kind : uint8_t { kSwitchOut, kSwitchIn, kWakeup };
  uint64_t time = 0;
  uint32_t tid = 0;
  Kind kind = kSwitchOut;
  bool counted = false;  // kSwitchOut: passed the filters, opens a period
  Start start;           // kSwitchOut and counted: what the period is keyed by
};

// Holds events until every ring has been read past their time, then hands
// them out in time order. Records are written to the rings within
// microseconds of their timestamp; anything older than the horizon (the
// clock when a drain pass began, minus a margin) is complete.
class TimeOrder {
 public:
  void push(const SchedEvent& e) { pending_.push_back(e); }
  // Calls fn(const SchedEvent&) for every held event with time <= horizon,
  // in time order (ties: in arrival order), and forgets them.
  template <class Fn>
  void release(uint64_t horizon, Fn&& fn) {
    sort();
    size_t n = head_;
    while (n < pending_.size() && pending_[n].time <= horizon) fn(pending_[n++]);
    forget(n);
  }
  template <class Fn>
  void release_all(Fn&& fn) {
    release(UINT64_MAX, fn);
  }
  size_t size() const { return pending_.size() - head_; }

 private:
  // Puts pending_[head_, end) in time order, stably.
  void sort();
  // Forgets the events before pending_[n].
  void forget(size_t n);
  // pending_[head_, end) are held: the released ones before head_ are
  // dropped in one move once they are at least half the vector.
  std::vector<SchedEvent> pending_;
  size_t head_ = 0;
  std::vector<size_t> runs_;  // sort()'s run starts, kept for its capacity
};

}  // namespace tracekit::offcpu
