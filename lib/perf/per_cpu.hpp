// One perf event per CPU, each with its own ring, read together: the shape
// every sampling tool uses (profile: cpu-clock; offcputime: sched_switch).
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "perf/event.hpp"
#include "perf/ring.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

class PerCpuEvents {
 public:
  // Opens attr on every CPU in cpus (for pid, -1 = all processes) and maps a
  // ring of ring_pages data pages for each. The events start disabled when
  // attr.disabled is set. A filter (tracepoints: PERF_EVENT_IOC_SET_FILTER,
  // which an event takes once for its life) is set on each as it opens.
  // Error: the first failure, naming the CPU.
  static Result<PerCpuEvents> open(const perf_event_attr& attr, const std::vector<int>& cpus,
                                   pid_t pid = -1, size_t ring_pages = 64,
                                   const std::string& filter = "");

  PerCpuEvents(PerCpuEvents&&) noexcept = default;
  PerCpuEvents& operator=(PerCpuEvents&&) noexcept = default;

  // Opens one more event, attr, on every CPU of this set, writing into that
  // CPU's ring (PERF_EVENT_IOC_SET_OUTPUT): many events (one per probe), one
  // ring per CPU. attr must have the same sample_type as the first, so that
  // records decode alike. Control operations below apply to it too. When
  // ids is given, the id of each event opened (PERF_EVENT_IOC_ID: what
  // PERF_SAMPLE_ID reports) is appended to it. A filter is set on each as
  // open() sets it. On error the events opened before the failure stay (a
  // task that exited leaves dead events, which write nothing).
  Status add(const perf_event_attr& attr, pid_t pid = -1, std::vector<uint64_t>* ids = nullptr,
             const std::string& filter = "");

  Status enable();
  Status disable();
  // PERF_EVENT_IOC_SET_FILTER on every event (tracepoint filters; an event
  // that has one refuses another).
  Status set_filter(const std::string& filter);

  // Blocks until a ring has data to read, a signal arrives, or timeout_ms
  // passes (-1: no timeout). Returns false when interrupted by a signal (or
  // when poll fails otherwise; errno tells). Rings wake the poller as
  // attr.wakeup_events / wakeup_watermark say (by default at half full).
  // Events that hung up are no longer waited for; once all have, returns true
  // at once.
  bool wait(int timeout_ms);

  // True once every event has reported POLLHUP: the process traced (pid !=
  // -1) has exited and nothing more will arrive after a last drain(). Without
  // this a wait() loop would spin, as a hung-up fd is always ready.
  bool hung_up() const;

  // Drains every ring: fn(int cpu, const perf_event_header&,
  // std::span<const uint8_t> record), at most max_per_ring records from each,
  // stopping as soon as stop() returns true (see Ring::drain). Returns the
  // number of records.
  template <class Fn, class Stop = NeverStop>
  size_t drain(Fn&& fn, size_t max_per_ring = SIZE_MAX, Stop&& stop = Stop{}) {
    size_t n = 0;
    for (size_t i = 0; i < rings_.size() && !stop(); ++i) {
      int cpu = cpus_[i];
      n += rings_[i].drain(
          [&](const perf_event_header& h, std::span<const uint8_t> r) { fn(cpu, h, r); },
          max_per_ring, stop);
    }
    return n;
  }

  // Records the kernel could not write: the sum of the events' own counts
  // (PERF_FORMAT_LOST, Linux 6.0: kernel::Feature::kLostSamples), which
  // includes records lost after the last successful write to a ring (the
  // kernel reports PERF_RECORD_LOST only at a ring's next write, so a burst
  // lost at the end of a run never gets one); without it, the sum of the
  // PERF_RECORD_LOST records read. elsewhere: the counts of events the
  // caller opened into these rings itself and closed before (own_lost()).
  uint64_t lost(uint64_t elsewhere = 0) const;
  // attr with the ring owners' read layout (PERF_FORMAT_LOST added where
  // they have it), for an event the caller opens into these rings itself
  // (ring_fd()), so that own_lost() can read its count.
  perf_event_attr counting_lost(const perf_event_attr& attr) const;
  // The own lost count of an event opened with counting_lost()'s attr; 0
  // where the kernel does not count it. Read it before closing the event.
  uint64_t own_lost(int fd) const;
  const std::vector<int>& cpus() const { return cpus_; }
  // The event that owns the ring of cpus()[i]: the target of
  // PERF_EVENT_IOC_SET_OUTPUT for an event the caller opens and closes itself
  // (one CPU at a time, unlike add()).
  int ring_fd(size_t i) const { return fds_[i].get(); }

 private:
  PerCpuEvents() = default;
  // attr with PERF_FORMAT_LOST added where the kernel has it (and the read
  // layout allows: not a group read); lost_word_ is then where the count
  // lies in what read() returns, in 64-bit words.
  perf_event_attr with_lost(const perf_event_attr& attr);
  size_t lost_word_ = 0;      // 0: not asked for (or not of every event)
  uint64_t read_format_ = 0;  // the ring owners', PERF_FORMAT_LOST included
  std::vector<int> cpus_;
  std::vector<Fd> fds_;
  std::vector<Ring> rings_;
  std::vector<bool> hup_;  // per event: POLLHUP seen
  std::vector<Fd> extra_fds_;     // add()ed events, writing into rings_
  std::vector<int> extra_cpus_;   // the CPU of each
};

}  // namespace tracekit::perf
