#include "cli/fail.hpp"

#include <cerrno>
#include <iostream>

#include "cli/command.hpp"
#include "cli/signals.hpp"

namespace tracekit::cli {

int fail(std::string_view tool, const Error& e) {
  if (e.err == EINTR && stop_requested()) return kExitOk;
  std::cerr << tool << ": " << e.str() << "\n";
  return kExitFailure;
}

}  // namespace tracekit::cli
