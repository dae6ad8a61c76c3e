#include "perf/event.hpp"

#include "kernel/perf_open.hpp"

#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "util/strings.hpp"

namespace tracekit::perf {

namespace {

constexpr int kDefaultMaxStack = 127;
constexpr const char* kMaxStackPath = "/proc/sys/kernel/perf_event_max_stack";

// Names the event in errors: "cpu-clock" alone is not enough when one tool
// opens several events on several CPUs.
std::string describe(const perf_event_attr& attr, pid_t pid, int cpu) {
  char buf[128];
  std::snprintf(buf, sizeof buf, "event type %u config %#llx pid %d cpu %d", attr.type,
                static_cast<unsigned long long>(attr.config), static_cast<int>(pid), cpu);
  return buf;
}

// ", now 2": which setting refused a non-root user. Empty when unreadable.
std::string paranoid_now() {
  auto text = read_file("/proc/sys/kernel/perf_event_paranoid");
  if (!text) return {};
  return ", now " + std::string(trim(*text));
}

}  // namespace

namespace detail {

std::string open_error_hint(int err) {
  switch (err) {
    case EACCES:
    case EPERM:
      return "run as root or lower /proc/sys/kernel/perf_event_paranoid" + paranoid_now();
    case ENOENT:
    case EOPNOTSUPP:
    case ENODEV:
      return "this event is not supported by this kernel";
    case EOVERFLOW:
      return "sample_max_stack is above /proc/sys/kernel/perf_event_max_stack (" +
             std::to_string(max_stack()) + ")";
    case ESRCH:
      return "no such process";
    case EMFILE:
      return "too many open files: raise the limit with ulimit -n";
    case EINVAL:
      return "invalid attributes for this event or kernel";
    default:
      return {};
  }
}

}  // namespace detail

Result<Fd> open_event(perf_event_attr attr, pid_t pid, int cpu, int group_fd) {
  attr.size = sizeof attr;
  long fd = kernel::perf_event_open_cloexec(&attr, pid, cpu, group_fd);
  if (fd < 0) {
    int err = errno;
    return Error{err, "cannot open perf event", describe(attr, pid, cpu),
                 detail::open_error_hint(err)};
  }
  return Fd(static_cast<int>(fd));
}

Result<std::vector<int>> online_cpus() {
  const std::string path = "/sys/devices/system/cpu/online";
  auto text = read_file(path);
  if (!text) return text.error();
  auto cpus = parse_cpu_list(*text);
  if (!cpus || cpus->empty()) return Error{EINVAL, "malformed CPU list", path, {}};
  return *std::move(cpus);
}

Result<void> check_cpu_online(int cpu, std::string_view online) {
  std::string_view list = trim(online);
  auto cpus = parse_cpu_list(list);
  if (!cpus || cpus->empty())
    return Error{EINVAL, "malformed CPU list", "/sys/devices/system/cpu/online", {}};
  for (int c : *cpus)
    if (c == cpu) return {};
  return Error{
      0, "CPU " + std::to_string(cpu) + " is not online", {}, "online CPUs: " + std::string(list)};
}

Result<void> check_cpu_online(int cpu) {
  auto text = read_file("/sys/devices/system/cpu/online");
  if (!text) return text.error();
  return check_cpu_online(cpu, *text);
}

int max_stack() {
  auto text = read_file(kMaxStackPath);
  if (!text) return kDefaultMaxStack;
  auto v = parse_int<int>(trim(*text));
  return v && *v > 0 ? *v : kDefaultMaxStack;
}

Status set_filter(const Fd& fd, const std::string& filter, const std::string& where) {
  if (filter.empty()) return {};
  if (::ioctl(fd.get(), PERF_EVENT_IOC_SET_FILTER, filter.c_str()) == 0) return {};
  const int err = errno;
  return Error{err, "cannot set filter '" + filter + "'", where, err == EINVAL ? kFilterHint : ""};
}

}  // namespace tracekit::perf
