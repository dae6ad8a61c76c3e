// How this works: regexes go to RE2 rather than std::regex. libstdc++'s
// std::regex backtracks and recurses once per pattern element: a nested
// quantifier ("(.*)*zzz") runs exponentially long on each of 120,000
// kernel names, and a long pattern overflows the stack while compiling.
// RE2 compiles to an automaton (explicit stacks, bounded memory) and runs it
// in one pass over the name. Globs stay with fnmatch, which is what bcc's
// and the kernel's wildcards mean; the length cap keeps both bounded.
#include "probe/match.hpp"

#include <fnmatch.h>
#include <re2/re2.h>

namespace tracekit::probe {

Result<std::optional<Matcher>> Matcher::optional_regex(const std::string& pattern) {
  if (pattern.empty()) return std::optional<Matcher>();
  auto m = make(pattern, /*regex=*/true);
  if (!m) return m.error();
  return std::optional<Matcher>(std::move(*m));
}

Result<Matcher> Matcher::make(const std::string& pattern, bool regex, Anchor anchor) {
  if (pattern.size() > kMaxPatternLength) {
    // The pattern itself would bury the message: its start is enough.
    return Error{0,
                 std::string(regex ? "regular expression" : "pattern") + " \"" +
                     pattern.substr(0, 32) + "...\" is " + std::to_string(pattern.size()) +
                     " characters long: the limit is " + std::to_string(kMaxPatternLength),
                 {},
                 {}};
  }
  Matcher m;
  m.pattern_ = pattern;
  m.anchor_ = anchor;
  if (regex) {
    RE2::Options opts;
    opts.set_log_errors(false);    // the error goes into our message instead
    opts.set_never_capture(true);  // only "does it match" is asked
    auto re = std::make_shared<const RE2>(pattern, opts);
    if (!re->ok())
      return Error{0, "bad regular expression \"" + pattern + "\": " + re->error(), {}, {}};
    m.re_ = std::move(re);
  }
  return m;
}

bool Matcher::operator()(const std::string& name) const {
  if (re_) {
    const RE2::Anchor a = anchor_ == Anchor::kStart   ? RE2::ANCHOR_START
                          : anchor_ == Anchor::kWhole ? RE2::ANCHOR_BOTH
                                                      : RE2::UNANCHORED;
    return re_->Match(name, 0, name.size(), a, nullptr, 0);
  }
  return fnmatch(pattern_.c_str(), name.c_str(), 0) == 0;
}

}  // namespace tracekit::probe
