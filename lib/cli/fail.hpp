// The one way a tool's failure ends its run.
#pragma once

#include <string_view>

#include "util/result.hpp"

namespace tracekit::cli {

// "tool: message" on stderr and kExitFailure (cli/command.hpp), except for a
// set-up that a stop signal interrupted (EINTR after Ctrl-C): the user asked
// for the end, so it is a clean one, kExitOk, with nothing said.
int fail(std::string_view tool, const Error& e);

}  // namespace tracekit::cli
