// symbols/kallsyms.hpp KernelSymbols: /proc/kallsyms text, then lookups of
// the addresses it names (and their neighbours), as a callchain would make.
#include <sstream>
#include <string>
#include <vector>

#include "fuzz.hpp"
#include "symbols/kallsyms.hpp"
#include "util/strings.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(kallsyms) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  auto ks = symbols::KernelSymbols::parse(in);

  // Addresses to look up: each line's first word, read as loosely as the
  // parser reads it, plus the extremes.
  std::vector<uint64_t> addrs = {0, 1, ~uint64_t{0}};
  for (auto line : split(text, '\n'))
    if (auto a = parse_hex<uint64_t>(line.substr(0, line.find(' ')))) addrs.push_back(*a);
  size_t hits = 0;
  for (uint64_t a : addrs) {
    for (uint64_t x : {a, a - 1, a + 1, a + 4096}) {
      for (bool ret : {false, true}) {
        auto r = ks.lookup(x, ret);
        if (!r) continue;
        ++hits;
        FUZZ_CHECK(!r->name.empty());
        FUZZ_CHECK(r->name.find_first_of(" \t\n") == std::string_view::npos);
        FUZZ_CHECK(r->offset <= x);  // offset from a symbol start at or below
      }
    }
  }
  FUZZ_CHECK(ks.size() > 0 || hits == 0);
}
