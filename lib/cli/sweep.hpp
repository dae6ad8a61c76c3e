// The start of every tool's run: removing what killed runs left in tracefs
// (instances and probe groups of tracekit runs whose PID is gone), as the
// README promises. stackcount and stacksnoop do it as they set up
// (lib/stackcount, lib/stacksnoop); the other tools call sweep_leftovers().
#pragma once

#include <string>
#include <string_view>

namespace tracekit::cli {

// How a tool that starts sweeps.
enum class Sweep {
  kMount,      // it uses tracefs anyway: find it with tracefs::tracing_dir(),
               // which mounts it when it is not mounted
  kIfMounted,  // it needs no tracefs: sweep only a tracefs that is mounted
               // already (never mount one, never go through debugfs/tracing,
               // whose automount would mount one)
};

// Removes the leftovers of dead runs (tracefs::remove_leftovers) in the
// tracefs that how finds. Nothing happens when there is none, or when this
// process may not write there (not root): the sweep is a courtesy, so it
// never fails, says on stderr only what it removes (and stops at Ctrl-C),
// and costs a read of /proc/mounts and of the
// instances directory when there is nothing to remove. Failures to remove
// are left for reset-tracing to report.
void sweep_leftovers(Sweep how);

// The mount point of a tracefs in mounts text (/proc/mounts format), ""
// when none is mounted: tracefs entries only, unlike
// tracefs::find_in_mounts, which also answers debugfs/tracing. Pure.
std::string mounted_tracefs(std::string_view mounts);

}  // namespace tracekit::cli
