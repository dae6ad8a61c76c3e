#include "tracefs/tracing_dir.hpp"

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>

#include "feature_table/feature_table.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

std::string find_in_mounts(std::string_view mounts, bool tracefs) {
  std::string debugfs;
  for (auto line : split(mounts, '\n')) {
    auto f = split(line, ' ');
    if (f.size() < 3) continue;
    if (f[2] == "tracefs" && tracefs) return std::string(f[1]);
    if (f[2] == "debugfs" && debugfs.empty()) debugfs = std::string(f[1]) + "/tracing";
  }
  return debugfs;
}

Error access_error(const std::string& path, int err) {
  if (err == EACCES || err == EPERM)
    return Error{err, "no permission to use tracefs", path, "run as root"};
  return Error{err, "cannot use tracefs", path, "is tracefs mounted there?"};
}

namespace {

// Mounts debugfs at /sys/kernel/debug and answers its tracing directory.
Result<std::string> mount_debugfs(const std::string& why) {
  const std::string where = "/sys/kernel/debug";
  if (mount("debugfs", where.c_str(), "debugfs", 0, nullptr) != 0 && errno != EBUSY)
    return Error::from_errno("cannot mount debugfs (" + why + ")", where,
                             errno == EPERM ? "run as root" : "is CONFIG_DEBUG_FS on?");
  std::string dir = where + "/tracing";
  struct stat st;
  if (stat((dir + "/events").c_str(), &st) != 0)
    return Error::from_errno("no ftrace under debugfs (" + why + ")", dir + "/events",
                             "is this kernel built with CONFIG_FTRACE?");
  return dir;
}

Result<std::string> discover() {
  if (kernel::forced_off(kernel::Feature::kEventTracing))
    return kernel::missing_error(kernel::Feature::kEventTracing, true);
  auto mounts = read_file("/proc/mounts");
  if (!mounts) return mounts.error();
  // TRACEKIT_KERNEL_FEATURES=-tracefs: as before 4.1, debugfs's tracing/.
  const bool no_tracefs = kernel::forced_off(kernel::Feature::kTracefs);
  std::string dir = find_in_mounts(*mounts, !no_tracefs);
  // A tracefs this user may not look inside (0700, root's) is answered here,
  // once for every tool: the accesses that would fail later would each guess
  // at the cause (a missing events/ directory, a missing tracepoint).
  struct stat st;
  if (!dir.empty()) {
    std::string events = dir + "/events";
    if (stat(events.c_str(), &st) == 0) return dir;
    if (errno == EACCES || errno == EPERM) return access_error(events, errno);
  }
  if (no_tracefs) return mount_debugfs("tracefs turned off by TRACEKIT_KERNEL_FEATURES");
  const std::string where = "/sys/kernel/tracing";
  if (mount("nodev", where.c_str(), "tracefs", 0, nullptr) == 0) return where;
  // Kernels before 4.1 have no tracefs filesystem (ENODEV), nor
  // /sys/kernel/tracing (ENOENT): ftrace lives in debugfs.
  if (errno == ENODEV || errno == ENOENT) return mount_debugfs("this kernel has no tracefs");
  return Error::from_errno("cannot mount tracefs", where,
                           errno == EPERM ? "run as root"
                                          : "is this kernel built with CONFIG_TRACING?");
}

}  // namespace

Result<std::string> tracing_dir() {
  static std::once_flag once;
  static Result<std::string> answer{std::string()};
  std::call_once(once, [] { answer = discover(); });
  return answer;
}

}  // namespace tracekit::tracefs
