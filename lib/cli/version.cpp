#include "cli/version.hpp"

namespace tracekit::cli {

std::string version_line(const std::string& name) {
  std::string v = std::string("tracekit ") + kVersion + ", commit " + kCommit;
  return name == "tracekit" ? v : name + " (" + v + ")";
}

}  // namespace tracekit::cli
