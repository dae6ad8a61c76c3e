// probe/spec.hpp parse_spec: the event specs of stackcount and friends
// ("vfs_read", "p::func", "r:c:malloc", "t:sched:sched_switch",
// "u:lib:provider:probe").
#include <string>

#include "fuzz.hpp"
#include "probe/spec.hpp"

using namespace tracekit::probe;

TRACEKIT_FUZZ_TARGET(spec) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto s = parse_spec(text);
  if (!s) {
    FUZZ_CHECK(!s.error().message.empty());
    return;
  }
  FUZZ_CHECK(s->text == text);
  FUZZ_CHECK(!s->pattern.empty());
  switch (s->kind) {
    case Kind::kKernel:
    case Kind::kKernelReturn:
      FUZZ_CHECK(s->library.empty() && s->category.empty());
      FUZZ_CHECK(s->pattern.find(':') == std::string::npos);
      break;
    case Kind::kTracepoint:
      FUZZ_CHECK(!s->category.empty() && s->library.empty());
      FUZZ_CHECK(s->category.find(':') == std::string::npos);
      FUZZ_CHECK(s->pattern.find(':') == std::string::npos);
      break;
    case Kind::kUser:
    case Kind::kUserReturn:
      FUZZ_CHECK(!s->library.empty() && s->category.empty());
      FUZZ_CHECK(s->library.find(':') == std::string::npos);
      FUZZ_CHECK(s->pattern.find(':') == std::string::npos);
      break;
    case Kind::kEventProbe:
      FUZZ_CHECK(false);  // made by tools, never parsed from a spec
      break;
    case Kind::kUsdt:
      FUZZ_CHECK(!s->library.empty());
      FUZZ_CHECK(s->library.find(':') == std::string::npos);
      break;
  }
}
