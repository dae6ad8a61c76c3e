// Writes to make if the process has to exit at once: a second Ctrl-C during
// a slow teardown ends the run without undoing everything (the next run's
// sweep, or reset-tracing, removes the rest), but it still stops what would
// go on costing: an instance of ours keeps recording until its tracing_on
// is 0. The registry is a fixed array of preformatted paths, so that the
// signal handler can replay it with open/write/close alone.
#pragma once

#include <string>

namespace tracekit {

// Registers "write text to path" for an abrupt exit. Returns a slot to
// unregister, or -1 when the registry is full or the strings are too long
// (nothing is registered then: the write is an optimisation, not a duty).
int add_exit_write(const std::string& path, const std::string& text);
// Unregisters a slot from add_exit_write(); -1 is ignored.
void remove_exit_write(int slot);
// Makes every registered write, each with open(O_WRONLY|O_TRUNC)/write/close.
// Async-signal-safe. Returns how many succeeded.
int run_exit_writes();

}  // namespace tracekit
