#include "perf/counters.hpp"

#include <sys/ioctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>

namespace tracekit::perf {

namespace {

// Raises RLIMIT_NOFILE's soft limit to the hard one (many functions times
// CPUs need many descriptors). Failures leave the limit as it was.
void raise_fd_limit() {
  rlimit r{};
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &r);
  }
}

}  // namespace

Result<Counters> Counters::open(const std::vector<Counted>& events, const std::vector<int>& tids,
                                int cpu) {
  raise_fd_limit();
  std::vector<int> cpus;
  if (tids.empty() && cpu >= 0) {
    cpus = {cpu};
  } else if (tids.empty()) {
    auto c = online_cpus();
    if (!c) return c.error();
    cpus = *c;
  }
  Counters c;
  for (const Counted& ev : events) {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = static_cast<uint64_t>(ev.id);
    attr.disabled = 1;
    attr.inherit = tids.empty() ? 0 : 1;
    std::vector<Fd> fds;
    auto add = [&](pid_t pid, int on) -> Status {
      auto fd = open_event(attr, pid, on);
      if (!fd) {
        Error e = fd.error();
        if (e.err == EMFILE || e.err == ENFILE) {
          const size_t need = events.size() * (tids.empty() ? cpus.size() : tids.size());
          e.hint = "counting " + std::to_string(events.size()) + " events needs " +
                   std::to_string(need) + " file descriptors: name fewer functions, or raise "
                   "the limit (ulimit -n)";
        }
        return e;
      }
      if (auto f = set_filter(*fd, ev.filter, "perf counter of event " + std::to_string(ev.id)); !f)
        return f.error();
      fds.push_back(std::move(*fd));
      return {};
    };
    if (tids.empty()) {
      for (int cpu : cpus)
        if (auto s = add(-1, cpu); !s) return s.error();
    } else {
      for (int tid : tids)
        if (auto s = add(tid, cpu); !s) {
          // A thread that has exited meanwhile is not an error.
          if (s.error().err == ESRCH) continue;
          return s.error();
        }
    }
    c.fds_.push_back(std::move(fds));
  }
  return c;
}

Status Counters::enable() {
  for (auto& per_id : fds_)
    for (auto& fd : per_id)
      if (::ioctl(fd.get(), PERF_EVENT_IOC_ENABLE, 0) != 0)
        return Error{errno, "cannot enable a perf counter", {}, {}};
  return {};
}

Result<std::vector<uint64_t>> Counters::read() const {
  std::vector<uint64_t> counts;
  counts.reserve(fds_.size());
  for (const auto& per_id : fds_) {
    uint64_t sum = 0;
    for (const auto& fd : per_id) {
      uint64_t v = 0;
      ssize_t n = ::read(fd.get(), &v, sizeof v);
      if (n != static_cast<ssize_t>(sizeof v))
        return Error{n < 0 ? errno : EIO, "cannot read a perf counter", {}, {}};
      sum += v;
    }
    counts.push_back(sum);
  }
  return counts;
}

Result<std::vector<uint64_t>> Counters::take() {
  auto now = read();
  if (!now) return now.error();
  taken_.resize(now->size(), 0);
  std::vector<uint64_t> delta(now->size());
  for (size_t i = 0; i < now->size(); ++i) {
    delta[i] = (*now)[i] - taken_[i];
    taken_[i] = (*now)[i];
  }
  return delta;
}

}  // namespace tracekit::perf
