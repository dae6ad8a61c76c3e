// util/strings.hpp: the number, list and CPU-list parsers every other parser
// is built on (parse_int/parse_hex, split, trim, parse_id_list for -p/-t,
// parse_cpu_list for /sys/devices/system/cpu/online).
#include <algorithm>
#include <string>

#include "fuzz.hpp"
#include "util/strings.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(strings) {
  std::string_view s(reinterpret_cast<const char*>(data), size);

  (void)parse_int<int>(s);
  (void)parse_int<unsigned>(s);
  (void)parse_int<long>(s);
  (void)parse_hex<uint32_t>(s);
  if (auto v = parse_int<uint64_t>(s)) FUZZ_CHECK(!s.empty() && s[0] != '-');
  if (auto v = parse_hex<uint64_t>(s)) FUZZ_CHECK(!s.empty());

  for (char sep : {',', '\n', ':', ' '}) {
    auto parts = split(s, sep);
    FUZZ_CHECK(parts.size() == static_cast<size_t>(std::count(s.begin(), s.end(), sep)) + 1);
    size_t total = parts.size() - 1;
    for (auto p : parts) {
      total += p.size();
      FUZZ_CHECK(p.find(sep) == std::string_view::npos);
    }
    FUZZ_CHECK(total == s.size());
  }

  std::string_view t = trim(s);
  if (!t.empty()) {
    FUZZ_CHECK(t.data() >= s.data() && t.data() + t.size() <= s.data() + s.size());
    for (char c : {t.front(), t.back()}) FUZZ_CHECK(c != ' ' && c != '\t' && c != '\n' && c != '\r');
  }

  if (auto ids = parse_id_list(s))
    for (int id : *ids) FUZZ_CHECK(id > 0);
  if (auto cpus = parse_cpu_list(s))
    for (int c : *cpus) FUZZ_CHECK(c >= 0);
}
