#include "session/entry.hpp"

#include "cli/fail.hpp"

namespace tracekit::session {

int finish(std::string_view tool, Outcome o) {
  if (auto* code = std::get_if<int>(&o)) return *code;
  if (auto* e = std::get_if<Error>(&o)) return cli::fail(tool, *e);
  auto& s = std::get<Started>(o);
  if (s.begin)
    if (auto st = s.begin(); !st) return cli::fail(tool, st.error());
  int code = run(*s.engine, s.run);
  s.engine.reset();  // before what begin holds (a traced command)
  return code;
}

}  // namespace tracekit::session
