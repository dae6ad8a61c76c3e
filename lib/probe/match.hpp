// Name matching for spec expansion: a pattern compiled once, then tried
// against every name of a list (120,000 kernel symbols here), which is why
// expansion does not call matches() per name.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include "util/result.hpp"

namespace re2 {
class RE2;
}

namespace tracekit::probe {

// Longest pattern (glob or regex) a Matcher takes. Kernel symbols are at
// most 512 characters (KSYM_NAME_LEN); the limit leaves room for long
// alternations and C++ names without letting a pasted blob through.
inline constexpr size_t kMaxPatternLength = 4096;

// Where a regex must match in the name. Globs always match the whole name.
enum class Anchor {
  kSearch,  // anywhere, like grep -E and Python's re.search (the snoop tools' -n)
  kStart,   // from the name's start, like Python's re.match: bcc's -r
            // (BPF.get_kprobe_functions, get_user_functions_and_addresses and
            // get_tracepoints use re.match), so "(write|read)$" is read and
            // write, not _IO_fread
  kWhole,   // the whole name
};

class Matcher {
 public:
  // A glob (fnmatch, no flags) or, with regex, an RE2 regular expression
  // matched where anchor says (by default searched for, unanchored:
  // "tcp_send" matches do_tcp_sendpages). RE2 matches in time linear in the
  // name and never recurses or backtracks, so "(.*)*zzz" costs what "zzz"
  // costs; what RE2 leaves out (backreferences, lookaround) does not
  // compile. Error: the pattern is longer than kMaxPatternLength, or the
  // regex does not compile; the message names the pattern and the reason.
  static Result<Matcher> make(const std::string& pattern, bool regex,
                              Anchor anchor = Anchor::kSearch);
  // A snoop tool's optional regex (-n name, a file name): nullopt for an
  // empty pattern, else make(pattern, true) and its errors.
  static Result<std::optional<Matcher>> optional_regex(const std::string& pattern);

  bool operator()(const std::string& name) const;

 private:
  std::string pattern_;
  std::shared_ptr<const re2::RE2> re_;  // set in regex mode
  Anchor anchor_ = Anchor::kSearch;
};

}  // namespace tracekit::probe
