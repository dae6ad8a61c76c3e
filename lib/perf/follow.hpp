// -p for perf events: every thread of a process, threads it starts later
// included, as `perf record -p` does it.
//
// One event per thread per CPU (perf_event_open(pid = tid, cpu = c)) with
// attr.inherit set, writing into the ring of that CPU's ring owner
// (PerCpuEvents::add, PERF_EVENT_IOC_SET_OUTPUT). When a thread with such
// events creates a task, the kernel gives the new task copies of them
// (perf_event_init_task at fork), whose records go to the original event's
// ring ("for inherited events we send all the output towards the parent",
// kernel/events/ring_buffer.c); the copies start in the state of the
// original, so a thread started later is followed from its first event.
// Child processes inherit the events too: callers drop their samples by the
// sample's pid (the process, tgid).
//
// Threads started while the events are being opened: the threads are listed
// (/proc/PID/task) again after each round of opening, and those not seen
// before get events of their own, until a listing shows no new thread. Such
// a late thread may have been created by a thread whose events were already
// open, and then holds inherited copies as well as its own events: every
// event would be counted twice. Which of the two it is cannot be asked of
// the kernel, so the samples of late threads are kept only when they come
// from their own events (FollowedThreads::duplicate, by PERF_SAMPLE_ID: a
// copy reports the id of the event it was copied from). Threads found in the
// first listing existed before any of our events and cannot hold copies.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "perf/per_cpu.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// The late threads of a followed process and the ids of their own events.
class FollowedThreads {
 public:
  // tid's own events have these ids (PERF_EVENT_IOC_ID).
  void own(uint32_t tid, const std::vector<uint64_t>& ids);
  // Whether a sample of thread tid reported with id (PERF_SAMPLE_ID) is an
  // inherited copy of an event that tid also has its own of: drop it.
  bool duplicate(uint32_t tid, uint64_t id) const;
  // How many late threads there are.
  size_t late() const { return own_.size(); }

 private:
  std::unordered_map<uint32_t, std::unordered_set<uint64_t>> own_;
};

// At most this many listings: a process that starts threads faster than
// events are opened for them is followed by inheritance after that.
inline constexpr int kMaxFollowRounds = 64;

// The listing loop, apart from the kernel for tests. list() returns the
// threads of the process now; open(tid, ids) opens the events of thread tid
// and, when ids is not null, appends their ids. Threads of the first
// listing are opened with ids null; later ones with ids, recorded in the
// result. An open that fails with ESRCH (the thread exited meanwhile) skips
// the thread. Error: the first listing is empty, or no thread could be
// opened ("no process with PID"), or an open failed otherwise.
Result<FollowedThreads> follow_threads(
    int pid, const std::function<std::vector<int>()>& list,
    const std::function<Status(int tid, std::vector<uint64_t>* ids)>& open);

// Opens every attr of attrs for every thread of process pid on every CPU of
// events, into events' rings. Each attr must have inherit set, and
// PERF_SAMPLE_ID in sample_type for duplicate() to work; events are left
// as attr.disabled says (enable them with events.enable(), which reaches
// the inherited copies too: the ioctl applies to an event and its
// children). filters, when given, holds a filter per attr ("" for none),
// set on each event as it opens (the inherited copies use their parent's).
// Error: as follow_threads().
Result<FollowedThreads> follow_process(PerCpuEvents& events,
                                       const std::vector<perf_event_attr>& attrs, int pid,
                                       const std::vector<std::string>& filters = {});

}  // namespace tracekit::perf
