// probe/sources.hpp find_in_ldconfig: `ldconfig -p` output, searched for a
// library the way "lib:func" specs name it. Input: the name, a NUL, the
// text; the name is also tried as "c" and "pthread".
#include <string>

#include "fuzz.hpp"
#include "probe/sources.hpp"

using namespace tracekit::probe;

TRACEKIT_FUZZ_TARGET(ldconfig) {
  tracekit::fuzz::Input in(data, size);
  std::string_view name = in.until_nul();
  std::string_view text = in.text();
  for (std::string_view n : {name, std::string_view("c"), std::string_view("pthread")}) {
    for (std::string_view arch : {"x86-64", ""}) {
      auto path = find_in_ldconfig(text, n, arch);
      if (!path) continue;
      // The path is a piece of one line of the text.
      FUZZ_CHECK(path->find('\n') == std::string::npos);
      FUZZ_CHECK(text.find(*path) != std::string_view::npos);
    }
  }
}
