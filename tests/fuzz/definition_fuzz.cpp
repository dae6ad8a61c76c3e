// probe/definition.hpp: perf-tools' kprobe and uprobe definitions
// ("p:myopen do_sys_open filename=+0(%si):string", "r:bash:readline").
#include <string>

#include "fuzz.hpp"
#include "probe/definition.hpp"
#include "tracefs/dynamic_events.hpp"

using namespace tracekit::probe;

TRACEKIT_FUZZ_TARGET(definition) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (bool uprobe : {false, true}) {
    auto d = uprobe ? parse_uprobe_definition(text) : parse_kprobe_definition(text);
    if (!d) {
      FUZZ_CHECK(!d.error().message.empty());
      continue;
    }
    FUZZ_CHECK(text.size() >= 2 && (text[0] == 'p' || text[0] == 'r') && text[1] == ':');
    FUZZ_CHECK(d->is_return == (text[0] == 'r'));
    FUZZ_CHECK(d->is_address || !d->function.empty());
    if (uprobe) FUZZ_CHECK(!d->target.empty());
    // The event name is always one the kernel takes.
    std::string name = d->event_name();
    FUZZ_CHECK(!name.empty() && name.size() <= 64);
    for (char c : name)
      FUZZ_CHECK((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_');
    FUZZ_CHECK(d->fetchargs.find('\n') == std::string::npos || text.find('\n') != std::string_view::npos);
  }
}
