// cli/command.hpp Command::parse: a command line, tokenised by
// Boost.ProgramOptions and converted by us, with one option of every kind
// (switches short, long and both, int, long, unsigned long, double and
// string values) and the positionals the tools have. Input: a flags byte
// (bit 0: a required positional first, as stackcount's pattern), then the
// arguments, NUL-separated (at most 64). Checks the header's promises: exit
// codes 0 (help, usage on out) and 2 (one "name: ..." line and the synopsis
// on err), and no target written unless the whole line is valid.
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "fuzz.hpp"

using namespace tracekit;

namespace {

struct Targets {
  bool all = false, d = false, folded = false;
  std::string pid = "default-pid";
  int hz = 49;
  long min = 1;
  unsigned long storage = 16384;
  double x = 0.5;
  std::string state = "default-state";
  std::string pattern = "default-pattern";
  std::optional<double> duration;
  std::optional<std::string> extra;

  bool operator==(const Targets&) const = default;
};

}  // namespace

TRACEKIT_FUZZ_TARGET(command) {
  fuzz::Input in(data, size);
  bool with_required = in.take<uint8_t>() & 1;
  std::vector<std::string> args = {"fuzzcmd"};
  while (in.left() > 0 && args.size() < 65) args.emplace_back(in.until_nul());
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);

  Targets t;
  const Targets defaults = t;
  cli::Command cmd("fuzzcmd",
                   "[-h] [-ad] [--folded] [-p PID] [-F HZ] [-m MIN] [-x X]\n"
                   "[--state STATE] [--stack-storage-size N] [duration] [extra]");
  cmd.flag("a,all", &t.all, "all")
      .flag("d", &t.d, "short only")
      .flag("folded", &t.folded, "long only")
      .option("p,pid", &t.pid, "PID", "a string")
      .option("F,frequency", &t.hz, "HZ", "an int\nover two lines")
      .option("m,min-block-time", &t.min, "MIN", "a long")
      .option("stack-storage-size", &t.storage, "N", "an unsigned long")
      .option("x", &t.x, "X", "a double")
      .option("state", &t.state, "STATE", "");
  if (with_required) cmd.required("pattern", &t.pattern, "required");
  cmd.positional("duration", &t.duration, "a double")
      .positional("extra", &t.extra, "a string")
      .example("fuzzcmd -F 99 10", "an example");

  std::ostringstream out, err;
  auto r = cmd.parse(static_cast<int>(args.size()), argv.data(), out, err);
  if (!r) {
    FUZZ_CHECK(out.str().empty() && err.str().empty());
    if (!cmd.given("frequency")) FUZZ_CHECK(t.hz == defaults.hz);
    if (!cmd.given("pid")) FUZZ_CHECK(t.pid == defaults.pid);
    if (t.duration) FUZZ_CHECK(cmd.given("duration"));
    if (with_required) FUZZ_CHECK(cmd.given("pattern"));
    return;
  }
  FUZZ_CHECK(t == defaults);  // nothing written after help or an error
  if (*r == cli::kExitOk) {
    FUZZ_CHECK(out.str().rfind("USAGE: fuzzcmd ", 0) == 0 && err.str().empty());
    FUZZ_CHECK(cmd.given("help"));
  } else {
    FUZZ_CHECK(*r == cli::kExitUsage);
    FUZZ_CHECK(out.str().empty() && err.str().rfind("fuzzcmd: ", 0) == 0);
    // The message (which may quote an argument with a newline in it), then
    // the synopsis.
    FUZZ_CHECK(err.str().find("\nUSAGE: fuzzcmd ") != std::string::npos);
  }
}
