// System-wide offcputime on kernels with context-switch records: the
// switch records, written into each CPU's ring by a dummy event of that
// CPU while SwitchChains (offcputime/pairing.hpp) says the CPU needs them,
// and closed where the sampled sched_switch proves enough.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "offcputime/pairing.hpp"
#include "perf/stack_sampler.hpp"
#include "util/fd.hpp"
#include "util/result.hpp"

namespace tracekit::offcpu {

class SwitchRecords {
 public:
  // Opens the dummy event of every ring of sampler's events, so that every
  // CPU starts with switch records; like: the sampled event's attr (its
  // clock and record trailer, which every event of a ring shares). sampler
  // must outlive this. Error: an event the kernel refused.
  static Result<SwitchRecords> start(perf::StackSampler& sampler, const perf_event_attr& like);

  // A sched_switch sampled on cpu from prev to next at time: the CPU's
  // chain followed, and its records turned on or off as it says. Returns
  // the time of a switch-in of prev the CPU missed, if it missed one.
  std::optional<uint64_t> link(int cpu, uint32_t prev, uint32_t next, uint64_t time);
  // Records were lost on cpu: its chain restarts.
  void lost(int cpu) { chains_.lost(ring_of(cpu)); }
  // Closes every dummy event, their own lost counts handed to the sampler.
  void close();
  // Switch-ins missed on CPUs without switch records.
  uint64_t missed() const { return chains_.missed(); }

 private:
  SwitchRecords(perf::StackSampler& sampler, const perf_event_attr& attr, size_t rings)
      : sampler_(&sampler), attr_(attr), fds_(rings), chains_(rings) {}
  size_t ring_of(int cpu) const { return ring_of_cpu_[static_cast<size_t>(cpu)]; }
  // Ring i's dummy event, on or off.
  Status set(size_t i, bool on);

  perf::StackSampler* sampler_;
  perf_event_attr attr_;            // of the dummy events
  std::vector<Fd> fds_;             // by ring index; open: the ring has records
  std::vector<size_t> ring_of_cpu_;  // CPU number -> ring index
  SwitchChains chains_;
};

}  // namespace tracekit::offcpu
