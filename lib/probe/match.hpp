// Name matching for spec expansion: a pattern compiled once, then tried
// against every name of a list (120,000 kernel symbols here), which is why
// expansion does not call matches() per name.
#pragma once

#include <optional>
#include <regex>
#include <string>

#include "util/result.hpp"

namespace tracekit::probe {

class Matcher {
 public:
  // A glob (fnmatch, no flags) or, with regex, an ECMAScript regular
  // expression that is searched for (unanchored, like grep -E), in time
  // polynomial in the name's length (no back-references). Error: the regex
  // does not compile; the message names it and gives std::regex's reason.
  static Result<Matcher> make(const std::string& pattern, bool regex);

  bool operator()(const std::string& name) const;

 private:
  std::string pattern_;
  std::optional<std::regex> re_;  // set in regex mode
};

}  // namespace tracekit::probe
