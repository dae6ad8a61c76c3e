#include "offcputime/switch_records.hpp"

#include <sys/ioctl.h>

#include <algorithm>

#include "perf/event.hpp"
#include "perf/process_events.hpp"

namespace tracekit::offcpu {

Result<SwitchRecords> SwitchRecords::start(perf::StackSampler& sampler,
                                           const perf_event_attr& like) {
  perf::PerCpuEvents& events = sampler.events();
  perf_event_attr a = events.counting_lost(like);  // own_lost() reads its count
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_DUMMY;
  a.sample_period = 0;
  a.disabled = 0;
  a.watermark = 0;
  a.wakeup_events = 0;
  a.context_switch = 1;
  perf::drop_process_events(a);
  const auto& cpus = events.cpus();
  SwitchRecords r(sampler, a, cpus.size());
  r.ring_of_cpu_.assign(static_cast<size_t>(*std::max_element(cpus.begin(), cpus.end())) + 1, 0);
  for (size_t i = 0; i < cpus.size(); ++i) {
    r.ring_of_cpu_[static_cast<size_t>(cpus[i])] = i;
    if (auto st = r.set(i, true); !st) return st.error();
  }
  return r;
}

std::optional<uint64_t> SwitchRecords::link(int cpu, uint32_t prev, uint32_t next, uint64_t time) {
  const size_t i = ring_of(cpu);
  auto l = chains_.link(i, prev, next, time, fds_[i].valid());
  // A failure to reopen leaves the CPU as it is: its misses are counted.
  if (l.action != SwitchChains::Action::kNone)
    (void)set(i, l.action == SwitchChains::Action::kRestoreRecords);
  return l.missed_since;
}

Status SwitchRecords::set(size_t i, bool on) {
  if (!on) {
    // Its own lost count (the switch records it could not write) goes to
    // the sampler's lost().
    if (fds_[i].valid()) sampler_->lost_elsewhere(sampler_->events().own_lost(fds_[i].get()));
    fds_[i] = Fd();
    return {};
  }
  const int cpu = sampler_->events().cpus()[i];
  auto fd = perf::open_event(attr_, -1, cpu);
  if (!fd) return fd.error();
  if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, sampler_->events().ring_fd(i)) != 0)
    return Error::from_errno("cannot share the ring of perf events", "CPU " + std::to_string(cpu));
  fds_[i] = std::move(*fd);
  return {};
}

void SwitchRecords::close() {
  for (size_t i = 0; i < fds_.size(); ++i) (void)set(i, false);
}

}  // namespace tracekit::offcpu
