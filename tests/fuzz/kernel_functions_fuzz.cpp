// probe/sources.hpp: the function lists spec expansion reads,
// available_filter_functions ("name" or "name [module]" per line) and, where
// that is unreadable, the text symbols of /proc/kallsyms. Both promise a
// sorted list without duplicates; kallsyms' leaves out what no kprobe takes.
#include <algorithm>
#include <string>

#include "fuzz.hpp"
#include "probe/sources.hpp"

using namespace tracekit::probe;

namespace {

bool sorted_unique(const std::vector<std::string>& v) {
  return std::adjacent_find(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
           return !(a < b);
         }) == v.end();
}

}  // namespace

TRACEKIT_FUZZ_TARGET(kernel_functions) {
  std::string_view text(reinterpret_cast<const char*>(data), size);

  auto filter = parse_filter_functions(text);
  FUZZ_CHECK(sorted_unique(filter));
  for (const auto& f : filter) {
    FUZZ_CHECK(!f.empty());
    FUZZ_CHECK(f.find_first_of(" \t\n") == std::string::npos);
  }

  auto syms = parse_kallsyms_functions(text);
  FUZZ_CHECK(sorted_unique(syms));
  for (const auto& f : syms) {
    FUZZ_CHECK(!f.empty() && f[0] != '.');
    FUZZ_CHECK(f.rfind("__pfx_", 0) != 0 && f.rfind("__SCT__", 0) != 0);
    FUZZ_CHECK(f.find('\n') == std::string::npos);
  }
}
