// symbols/perf_map.hpp PerfMap: /tmp/perf-PID.map lines ("START SIZE name",
// hex) laid onto disjoint ranges where later lines win, then lookups at and
// around every address the text names.
#include <sstream>
#include <string>
#include <vector>

#include "fuzz.hpp"
#include "symbols/perf_map.hpp"
#include "util/strings.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(perf_map) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  auto pm = symbols::PerfMap::parse(in);
  pm.set_path("/tmp/perf-1.map");

  std::vector<uint64_t> addrs = {0, ~uint64_t{0}};
  size_t lines = 0;
  for (auto line : split(text, '\n')) {
    ++lines;
    for (auto word : split(trim(line), ' '))
      if (auto a = parse_hex<uint64_t>(word)) addrs.push_back(*a);
  }
  // Each line adds one range and splits at most one other in two.
  FUZZ_CHECK(pm.size() <= 2 * lines);
  for (uint64_t a : addrs) {
    for (uint64_t x : {a, a - 1, a + 1}) {
      auto r = pm.lookup(x);
      if (!r) continue;
      FUZZ_CHECK(!r->name.empty());
      FUZZ_CHECK(r->offset <= x);
      FUZZ_CHECK(r->module == "/tmp/perf-1.map");
    }
  }
}
