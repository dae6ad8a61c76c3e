// probe/match.hpp Matcher: the glob (fnmatch) or regex (std::regex,
// ECMAScript) of a spec, compiled once and tried on every kernel function
// name. Input: a flags byte (bit 0: regex), the pattern, a NUL, the name (up
// to the next NUL: names come from text files and C strings, never hold one).
#include <string>

#include "fuzz.hpp"
#include "probe/match.hpp"
#include "probe/spec.hpp"

using namespace tracekit::probe;

TRACEKIT_FUZZ_TARGET(match) {
  tracekit::fuzz::Input in(data, size);
  bool regex = in.take<uint8_t>() & 1;
  std::string pattern(in.until_nul());
  std::string name(in.until_nul());
  auto m = Matcher::make(pattern, regex);
  if (!m) {
    FUZZ_CHECK(regex);  // a glob always compiles
    FUZZ_CHECK(!matches(pattern, name, regex));
    return;
  }
  bool hit = (*m)(name);
  FUZZ_CHECK(hit == matches(pattern, name, regex));
  for (const char* known : {"vfs_read", "__x64_sys_getppid", "tcp_sendmsg", "do_sys_openat2",
                            "_ZN4llvm12PassRegistry11getPassInfoEPKv", ""})
    (void)(*m)(known);
  if (!regex && pattern.find_first_of("*?[\\") == std::string::npos)
    FUZZ_CHECK(hit == (pattern == name));  // no wildcard: equality
}
