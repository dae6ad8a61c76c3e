// The entry contract of every tool: its entry point (the tool table's
// `main`) parses its command line and sets its run up, then hands back an
// Outcome; the dispatcher ends it with finish(), the one place where a
// tool's run is driven, its errors printed and its exit code chosen.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <variant>

#include "session/run.hpp"
#include "util/result.hpp"

namespace tracekit::session {

// An engine already tracing, and how to run it.
struct Started {
  std::unique_ptr<Engine> engine;
  RunOptions run;
  // Called once before the run's loop: syscount prints its header and
  // resumes the command it traces. What it holds outlives the engine.
  std::function<Status()> begin = {};
};

// What a tool's entry point gives back: an exit code (usage, -h, a tool that
// made its run itself), an Error (its set-up failed), or a Started run.
using Outcome = std::variant<int, Error, Started>;

// A started engine of type E, from the Result its start() returned (taken
// by reference: the run options may be computed from the engine first).
template <class E>
Outcome started(Result<E>&& engine, RunOptions run) {
  if (!engine) return std::move(engine.error());
  return Started{std::make_unique<E>(std::move(*engine)), std::move(run)};
}
template <class E>
Outcome started(Result<std::unique_ptr<E>>&& engine, RunOptions run) {
  if (!engine) return std::move(engine.error());
  return Started{std::move(*engine), std::move(run)};
}

// Runs a Started (session::run), prints an Error as cli::fail does ("tool:
// message", exit 1; exit 0 for a set-up a stop signal interrupted), returns
// the exit code.
int finish(std::string_view tool, Outcome o);

}  // namespace tracekit::session
