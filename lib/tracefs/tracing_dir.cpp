#include "tracefs/tracing_dir.hpp"

#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>
#include <mutex>

#include "util/strings.hpp"

namespace tracekit::tracefs {

std::string find_in_mounts(std::string_view mounts) {
  std::string debugfs;
  for (auto line : split(mounts, '\n')) {
    auto f = split(line, ' ');
    if (f.size() < 3) continue;
    if (f[2] == "tracefs") return std::string(f[1]);
    if (f[2] == "debugfs" && debugfs.empty()) debugfs = std::string(f[1]) + "/tracing";
  }
  return debugfs;
}

namespace {

Result<std::string> discover() {
  auto mounts = read_file("/proc/mounts");
  if (!mounts) return mounts.error();
  std::string dir = find_in_mounts(*mounts);
  // A mounted tracefs is the answer even when this user may not look inside
  // (events/ is 0700): the error then comes from the access that fails.
  struct stat st;
  if (!dir.empty() && (stat((dir + "/events").c_str(), &st) == 0 || errno == EACCES)) return dir;
  const std::string where = "/sys/kernel/tracing";
  if (mount("nodev", where.c_str(), "tracefs", 0, nullptr) != 0)
    return Error::from_errno("cannot mount tracefs", where,
                             errno == EPERM ? "run as root"
                                            : "is this kernel built with CONFIG_TRACING?");
  return where;
}

}  // namespace

Result<std::string> tracing_dir() {
  static std::once_flag once;
  static Result<std::string> answer{std::string()};
  std::call_once(once, [] { answer = discover(); });
  return answer;
}

}  // namespace tracekit::tracefs
