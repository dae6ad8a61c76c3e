// What dead runs left in tracefs: instances named tracekit_<pid>_<n> and
// probe groups named tracekit_<pid>[...] whose <pid> no longer runs (a run
// killed with SIGKILL cannot clean up). Every tool removes them when it
// starts; reset-tracing does it on demand.
#pragma once

#include <string>
#include <vector>

namespace tracekit::tracefs {

struct Cleanup {
  std::vector<std::string> removed;  // "instance tracekit_12_0", "probe tracekit_12/p_vfs_read_0"
  std::vector<std::string> failed;   // the same, with the reason appended
};

// Removes the leftovers of dead runs. include_live: also those of runs that
// are still alive (reset-tracing -f), except the calling process's own.
// Inside an instance, events, triggers and the tracer are turned off first.
Cleanup remove_leftovers(const std::string& tracing_dir, bool include_live = false);

// The pid in a name of ours ("tracekit_123_0", "tracekit_123"), or -1.
int owner_pid(const std::string& name);

}  // namespace tracekit::tracefs
