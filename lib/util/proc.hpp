// Facts about processes from /proc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "util/result.hpp"

namespace tracekit {

// Whether a process or thread with this id exists (kill(id, 0)).
bool process_exists(int id);
// The error of a PID option naming no process: "no process with PID N".
Error no_process_error(int pid);
// The threads of process pid (/proc/PID/task), sorted; empty when it is gone.
std::vector<int> threads_of(int pid);
// The process (thread group) of thread tid (/proc/TID/status "Tgid:").
std::optional<int> tgid_of(int tid);

}  // namespace tracekit
