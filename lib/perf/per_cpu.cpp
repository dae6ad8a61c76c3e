// How this works: perf events are per CPU (or per task); a system-wide tool
// opens the same attr once on every CPU, each with its own ring, and polls all
// the fds together. Every control operation (enable, disable, filter) goes to
// all events and carries on past a failure, so the events stay in the same
// state as far as possible; the first failure is reported.
#include "perf/per_cpu.hpp"

#include <poll.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "kernel/features.hpp"

namespace tracekit::perf {

namespace {

// ioctl on every fd; the first failure, naming its CPU, is returned.
Status ioctl_all(const std::vector<Fd>& fds, const std::vector<int>& cpus, unsigned long request,
                 unsigned long arg, const std::string& what, const char* einval_hint) {
  Status first;
  for (size_t i = 0; i < fds.size(); ++i) {
    if (::ioctl(fds[i].get(), request, arg) == 0 || !first.ok()) continue;
    const int err = errno;
    first = Error{err, what, "perf event on CPU " + std::to_string(cpus[i]),
                  err == EINVAL ? einval_hint : ""};
  }
  return first;
}

// PERF_EVENT_IOC_SET_FILTER on one event just opened; nothing for "".
Status set_filter_of_cpu(const Fd& fd, const std::string& filter, int cpu) {
  return set_filter(fd, filter, "perf event on CPU " + std::to_string(cpu));
}

}  // namespace

Result<PerCpuEvents> PerCpuEvents::open(const perf_event_attr& attr, const std::vector<int>& cpus,
                                        pid_t pid, size_t ring_pages, const std::string& filter) {
  PerCpuEvents ev;
  ev.cpus_ = cpus;
  ev.fds_.reserve(cpus.size());
  ev.rings_.reserve(cpus.size());
  const perf_event_attr a = ev.with_lost(attr);
  for (int cpu : cpus) {
    auto fd = open_event(a, pid, cpu);
    if (!fd) return fd.error();  // its path names the CPU
    if (auto st = set_filter_of_cpu(*fd, filter, cpu); !st) return st.error();
    auto ring = Ring::map(fd->get(), ring_pages);
    if (!ring) {
      Error e = ring.error();
      e.message += " on CPU " + std::to_string(cpu);
      return e;
    }
    ev.fds_.push_back(std::move(*fd));
    ev.rings_.push_back(std::move(*ring));
  }
  ev.hup_.assign(cpus.size(), false);
  return ev;
}

Status PerCpuEvents::add(const perf_event_attr& attr, pid_t pid, std::vector<uint64_t>* ids,
                         const std::string& filter) {
  // The same read layout as the ring owners' (lost() reads them all alike);
  // an event of another layout makes lost() count the records alone.
  perf_event_attr a = counting_lost(attr);
  if (a.read_format != read_format_) lost_word_ = 0;
  for (size_t i = 0; i < cpus_.size(); ++i) {
    auto fd = open_event(a, pid, cpus_[i]);
    if (!fd) return fd.error();
    if (auto st = set_filter_of_cpu(*fd, filter, cpus_[i]); !st) return st;
    if (::ioctl(fd->get(), PERF_EVENT_IOC_SET_OUTPUT, fds_[i].get()) != 0)
      return Error::from_errno("cannot share the ring of perf events",
                               "CPU " + std::to_string(cpus_[i]));
    if (ids) {
      uint64_t id = 0;
      if (::ioctl(fd->get(), PERF_EVENT_IOC_ID, &id) != 0)
        return Error::from_errno("cannot read the id of a perf event",
                                 "CPU " + std::to_string(cpus_[i]));
      ids->push_back(id);
    }
    extra_fds_.push_back(std::move(*fd));
    extra_cpus_.push_back(cpus_[i]);
  }
  return {};
}

namespace {

// The same ioctl on the ring owners and on the events writing into them.
Status ioctl_both(const std::vector<Fd>& a, const std::vector<int>& acpus, const std::vector<Fd>& b,
                  const std::vector<int>& bcpus, unsigned long request, unsigned long arg,
                  const std::string& what, const char* einval_hint) {
  Status first = ioctl_all(a, acpus, request, arg, what, einval_hint);
  Status second = ioctl_all(b, bcpus, request, arg, what, einval_hint);
  return first.ok() ? second : first;
}

}  // namespace

Status PerCpuEvents::enable() {
  return ioctl_both(fds_, cpus_, extra_fds_, extra_cpus_, PERF_EVENT_IOC_ENABLE, 0,
                    "cannot enable perf event", "");
}

Status PerCpuEvents::disable() {
  return ioctl_both(fds_, cpus_, extra_fds_, extra_cpus_, PERF_EVENT_IOC_DISABLE, 0,
                    "cannot disable perf event", "");
}

Status PerCpuEvents::set_filter(const std::string& filter) {
  return ioctl_both(fds_, cpus_, extra_fds_, extra_cpus_, PERF_EVENT_IOC_SET_FILTER,
                    reinterpret_cast<unsigned long>(filter.c_str()),
                    "cannot set filter '" + filter + "'", kFilterHint);
}

bool PerCpuEvents::wait(int timeout_ms) {
  std::vector<pollfd> pfds;
  std::vector<size_t> index;  // pfds[k] is event index[k]
  for (size_t i = 0; i < fds_.size(); ++i) {
    if (hup_[i]) continue;
    pfds.push_back({fds_[i].get(), POLLIN, 0});
    index.push_back(i);
  }
  if (pfds.empty() && !fds_.empty()) return true;
  if (::poll(pfds.data(), pfds.size(), timeout_ms) < 0) return false;
  for (size_t k = 0; k < pfds.size(); ++k)
    if (pfds[k].revents & POLLHUP) hup_[index[k]] = true;
  return true;
}

bool PerCpuEvents::hung_up() const {
  if (hup_.empty()) return false;
  for (bool h : hup_)
    if (!h) return false;
  return true;
}

perf_event_attr PerCpuEvents::with_lost(const perf_event_attr& attr) {
  perf_event_attr a = attr;
  lost_word_ = 0;
  if ((a.read_format & PERF_FORMAT_GROUP) != 0 ||
      !kernel::Features::host().has(kernel::Feature::kLostSamples))
    return a;
  a.read_format |= PERF_FORMAT_LOST;
  read_format_ = a.read_format;
  // value, [time_enabled], [time_running], [id], lost
  lost_word_ = 1 + ((a.read_format & PERF_FORMAT_TOTAL_TIME_ENABLED) != 0) +
               ((a.read_format & PERF_FORMAT_TOTAL_TIME_RUNNING) != 0) +
               ((a.read_format & PERF_FORMAT_ID) != 0);
  return a;
}

perf_event_attr PerCpuEvents::counting_lost(const perf_event_attr& attr) const {
  perf_event_attr a = attr;
  if (lost_word_ != 0 && (a.read_format | PERF_FORMAT_LOST) == read_format_)
    a.read_format |= PERF_FORMAT_LOST;
  return a;
}

uint64_t PerCpuEvents::own_lost(int fd) const {
  if (lost_word_ == 0) return 0;
  uint64_t words[5] = {};
  const ssize_t n = ::read(fd, words, sizeof words);
  return n >= static_cast<ssize_t>((lost_word_ + 1) * sizeof(uint64_t)) ? words[lost_word_] : 0;
}

uint64_t PerCpuEvents::lost(uint64_t elsewhere) const {
  uint64_t reported = 0;
  for (const auto& r : rings_) reported += r.lost();
  if (lost_word_ == 0) return reported;
  // Every record an event could not write counts in that event's own
  // count (an inherited copy's in its parent's), in whichever ring it wrote
  // to: their sum is every ring's loss, reported or not yet.
  uint64_t counted = elsewhere;
  for (const Fd& fd : fds_) counted += own_lost(fd.get());
  for (const Fd& fd : extra_fds_) counted += own_lost(fd.get());
  return std::max(reported, counted);
}

}  // namespace tracekit::perf
