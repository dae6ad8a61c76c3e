// tracefs/event_format.hpp EventFormat: a tracefs format file, parsed by
// libtraceevent, then its fields read from a raw record (PERF_SAMPLE_RAW)
// and the record printed by the event's print format. Input: the format
// text, a NUL, the raw record (in a block of its exact size).
#include <string>

#include "fuzz.hpp"
#include "tracefs/event_format.hpp"
#include "util/strings.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(event_format) {
  fuzz::Input in(data, size);
  std::string_view text = in.until_nul();
  auto raw = fuzz::exact_copy(in.rest());
  auto f = tracefs::EventFormat::parse(text, "fuzz");
  if (!f) return;
  (void)f->id();
  FUZZ_CHECK(f->name().rfind("fuzz:", 0) == 0);
  // Every "field:TYPE NAME;" line names a field to read.
  for (auto line : split(text, '\n')) {
    auto at = line.find("field:");
    auto semi = line.find(';');
    if (at == std::string_view::npos || semi == std::string_view::npos || semi < at) continue;
    auto decl = line.substr(at + 6, semi - at - 6);
    auto sp = decl.find_last_of(" *");
    std::string name(decl.substr(sp == std::string_view::npos ? 0 : sp + 1));
    if (auto br = name.find('['); br != std::string::npos) name.resize(br);
    const tep_format_field* field = f->field(name.c_str());
    if (!field) continue;
    (void)f->number(field, raw);
    std::string_view s = f->string(field, raw);
    FUZZ_CHECK(fuzz::within(s, raw));
  }
  (void)f->print(raw);
}
