#include "util/proc.hpp"

#include <dirent.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>

#include "util/strings.hpp"

namespace tracekit {

bool process_exists(int id) { return id > 0 && (kill(id, 0) == 0 || errno == EPERM); }

Error no_process_error(int pid) {
  return Error{ESRCH, "no process with PID " + std::to_string(pid), {}, "check the PID with ps"};
}

std::vector<int> threads_of(int pid) {
  std::vector<int> tids;
  std::string dir = "/proc/" + std::to_string(pid) + "/task";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (auto t = parse_int<int>(e->d_name)) tids.push_back(*t);
    closedir(d);
  }
  std::sort(tids.begin(), tids.end());
  return tids;
}

std::optional<int> tgid_of(int tid) {
  auto status = read_file("/proc/" + std::to_string(tid) + "/status");
  if (!status) return std::nullopt;
  for (auto line : split(*status, '\n'))
    if (line.rfind("Tgid:", 0) == 0) return parse_int<int>(trim(line.substr(5)));
  return std::nullopt;
}

}  // namespace tracekit
