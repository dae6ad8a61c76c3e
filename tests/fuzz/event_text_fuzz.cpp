// output/event_text.hpp: the rewriting of probe addresses in event text
// ("name: (ffffffff81234560 <- ...)"), and session/saved_comms.hpp's
// saved_cmdlines parsing.
#include <sstream>
#include <string>

#include "fuzz.hpp"
#include "output/event_text.hpp"
#include "session/saved_comms.hpp"
#include "symbols/kallsyms.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(event_text) {
  std::string text(reinterpret_cast<const char*>(data), size);
  static const symbols::KernelSymbols ksyms = [] {
    std::istringstream in("ffffffff81200000 T vfs_read\nffffffff81300000 T ksys_read\n");
    return symbols::KernelSymbols::parse(in);
  }();
  std::string k = output::symbolize_probe_ip(text, ksyms);
  std::string u = output::user_probe_ip(text);
  // Only what follows "name: (" changes; the text before it never does.
  auto open = text.find(": (");
  if (open == std::string::npos) {
    FUZZ_CHECK(k == text && u == text);
  } else {
    FUZZ_CHECK(k.compare(0, open + 3, text, 0, open + 3) == 0);
    FUZZ_CHECK(u.compare(0, open + 3, text, 0, open + 3) == 0);
  }
  auto m = session::parse_saved_cmdlines(text);
  FUZZ_CHECK(m.size() <= text.size());
}
