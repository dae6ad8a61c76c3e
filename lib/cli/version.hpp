// The version of tracekit and the git commit a binary was built from.
//
// Both come from build/gen/version.cc, which the Makefile writes (and
// rewrites only when they change, so that a new commit recompiles that one
// file and relinks, nothing else). A tree without .git (a tarball) builds
// with the commit "unknown".
#pragma once

#include <string>

namespace tracekit::cli {

extern const char kVersion[];  // "0.1"
extern const char kCommit[];   // 40 hex digits, or "unknown"

// What --version prints, one line: "NAME (tracekit VERSION, commit COMMIT)",
// or "tracekit VERSION, commit COMMIT" for the multi-call binary itself.
std::string version_line(const std::string& name);

}  // namespace tracekit::cli
