#include "util/result.hpp"

#include <cerrno>
#include <cstring>

namespace tracekit {

std::string Error::str() const {
  std::string s = message;
  if (!path.empty()) s += (s.empty() ? "" : ": ") + path;
  if (err != 0) s += (s.empty() ? "" : ": ") + std::string(std::strerror(err));
  if (!hint.empty()) s += " (" + hint + ")";
  return s;
}

Error Error::from_errno(std::string message, std::string path, std::string hint) {
  return Error{errno, std::move(message), std::move(path), std::move(hint)};
}

}  // namespace tracekit
