// How this works: a spec is split at ':' into one to four parts, as bcc's
// stackcount and funccount do (tools/stackcount.py, tools/funccount.py:
// Probe.__init__): one part is a kernel function, two parts are
// "library:function", three parts start with the probe type. Like bcc's
// trace (tools/trace.py: _parse_spec) an empty type means "p" and "r" is a
// return probe; like trace, USDT specs may name a provider
// ("u:lib:provider:probe"). Where bcc would read a two-part spec whose first
// part is a type letter ("t:sched", "p:vfs_read") as a library named "t" or
// "p" and fail later with "unable to find library", we say what is missing:
// no library has a one-letter name that is also a probe type.
#include "probe/spec.hpp"

#include <string>
#include <vector>

#include "probe/match.hpp"
#include "util/strings.hpp"

namespace tracekit::probe {

namespace {

Error bad(std::string_view text, std::string reason, std::string hint = {}) {
  return Error{
      0, "bad event spec \"" + elide(text) + "\": " + std::move(reason), {}, std::move(hint)};
}

constexpr const char* kTypes = "types: p (entry), r (return), t (tracepoint), u (USDT)";
constexpr const char* kNeedsTracepoint = "tracepoint spec needs \"t:category:event\"";
constexpr const char* kNeedsUsdt = "USDT spec needs \"u:lib:probe\"";

}  // namespace

Result<Spec> parse_spec(std::string_view text) {
  Spec s;
  s.text = std::string(text);
  if (text.empty()) return bad(text, "empty");
  std::vector<std::string_view> parts = split(text, ':');

  if (parts.size() == 1) {
    s.kind = Kind::kKernel;
    s.pattern = std::string(parts[0]);
    return s;
  }

  if (parts.size() == 2) {
    std::string_view lib = parts[0], fn = parts[1];
    if (lib == "t") return bad(text, kNeedsTracepoint);
    if (lib == "u") return bad(text, kNeedsUsdt);
    if (lib == "p")
      return bad(text, "entry probe spec needs \"p::func\" (kernel) or \"p:lib:func\" (user)");
    if (lib == "r")
      return bad(text, "return probe spec needs \"r::func\" (kernel) or \"r:lib:func\" (user)");
    if (fn.empty()) return bad(text, "no function name");
    // ":func" is bcc's "p::func" with the type left out: a kernel function.
    s.kind = lib.empty() ? Kind::kKernel : Kind::kUser;
    s.library = std::string(lib);
    s.pattern = std::string(fn);
    return s;
  }

  std::string_view type = parts[0];
  if (type == "u") {
    // trace's "u:lib:provider:probe" names the provider too.
    if (parts.size() > 4 || parts[1].empty() || parts[2].empty() ||
        (parts.size() == 4 && parts[3].empty()))
      return bad(text, kNeedsUsdt);
    s.kind = Kind::kUsdt;
    s.library = std::string(parts[1]);
    s.pattern = std::string(text.substr(parts[0].size() + parts[1].size() + 2));
    return s;
  }
  if (parts.size() > 3) return bad(text, "too many ':'-separated parts");
  if (type == "t") {
    if (parts[1].empty() || parts[2].empty()) return bad(text, kNeedsTracepoint);
    s.kind = Kind::kTracepoint;
    s.category = std::string(parts[1]);
    s.pattern = std::string(parts[2]);
    return s;
  }
  bool ret = type == "r";
  if (!ret && type != "p" && !type.empty())
    return bad(text, "unknown probe type \"" + std::string(type) + "\"", kTypes);
  if (parts[2].empty()) return bad(text, "no function name");
  s.library = std::string(parts[1]);
  if (s.library.empty())
    s.kind = ret ? Kind::kKernelReturn : Kind::kKernel;
  else
    s.kind = ret ? Kind::kUserReturn : Kind::kUser;
  s.pattern = std::string(parts[2]);
  return s;
}

bool matches(const std::string& pattern, const std::string& name, bool regex) {
  auto m = Matcher::make(pattern, regex);
  return m && (*m)(name);
}

}  // namespace tracekit::probe
