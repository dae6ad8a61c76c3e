// Where tracefs is. Tools that need it call tracing_dir(), which mounts it at
// /sys/kernel/tracing when it is not mounted anywhere (many kernels do not
// mount it at boot).
#pragma once

#include <string>
#include <string_view>

#include "util/result.hpp"

namespace tracekit::tracefs {

// The tracefs mount point: the first tracefs in /proc/mounts, else a
// "tracing" directory of a mounted debugfs, else /sys/kernel/tracing after
// mounting tracefs there, else (a kernel before 4.1, without the tracefs
// filesystem, or TRACEKIT_KERNEL_FEATURES=-tracefs) the tracing directory of
// debugfs, mounted at /sys/kernel/debug. Error: this user may not look inside
// it (access_error: run as root); nothing could be mounted (hint: root,
// CONFIG_TRACING / CONFIG_DEBUG_FS). The answer is computed once per process.
Result<std::string> tracing_dir();

// The error for a tracefs path (path) that could not be used, from the
// errno err: EACCES/EPERM is a permission problem ("no permission to use
// tracefs", hint "run as root": tracefs is root's unless mounted with a
// gid), anything else is one of a tracefs that is not there ("is tracefs
// mounted there?"). Pure, for tests.
Error access_error(const std::string& path, int err);

// The tracefs mount point named in mounts text (/proc/mounts format), else
// the tracing directory of a debugfs mount (always that with tracefs false),
// or "" when there is none. Pure, for tests.
std::string find_in_mounts(std::string_view mounts, bool tracefs = true);

}  // namespace tracekit::tracefs
