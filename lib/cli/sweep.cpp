#include "cli/sweep.hpp"

#include <unistd.h>

#include <cerrno>
#include <iostream>

#include "cli/signals.hpp"
#include "tracefs/leftovers.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::cli {

std::string mounted_tracefs(std::string_view mounts) {
  for (auto line : split(mounts, '\n')) {
    auto f = split(line, ' ');
    if (f.size() >= 3 && f[2] == "tracefs") return std::string(f[1]);
  }
  return "";
}

void sweep_leftovers(Sweep how) {
  std::string dir;
  if (how == Sweep::kMount) {
    auto d = tracefs::tracing_dir();
    if (!d) return;  // the tool's own use of tracefs reports it
    dir = *d;
  } else {
    auto mounts = read_file("/proc/mounts");
    if (!mounts) return;
    dir = mounted_tracefs(*mounts);
  }
  if (dir.empty() || access(dir.c_str(), W_OK) != 0) return;
  // Said on stderr as stackcount's sweep says it, and cut short by Ctrl-C:
  // the tool then sees the stop and ends.
  (void)tracefs::sweep_dead_runs(dir, program_invocation_short_name, std::cerr, stop_requested);
}

}  // namespace tracekit::cli
