// Command lines, perf-tools style, on Boost.ProgramOptions.
//
// A Command knows its options, positional arguments and examples, parses
// argv (short options bundle: -adf, -Ti 5, -F99; no abbreviation of long
// options), and prints the usage text:
//
//   USAGE: profile [-h] [-p PID[,PID..] | -L TID[,TID..]] [-U | -K] [duration]
//                  -h, --help             # this usage message
//                  -p, --pid PID          # profile these processes only
//                  -F, --frequency HZ     # sample frequency, Hertz (default 49)
//                  duration               # seconds to trace (default: until Ctrl-C)
//     examples:
//          profile                  # profile stack traces at 49 Hertz until Ctrl-C
//          profile -F 99 -f 30      # 99 Hertz, folded output, for 30 seconds
//
// Exit codes (TOOLS.md): 0 after -h/--help (usage on stdout); 2 for a usage
// error (one line "tool: what is wrong" then the USAGE synopsis, on stderr);
// tools use 1 for runtime failures.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tracekit::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // runtime failure
inline constexpr int kExitUsage = 2;    // bad command line

class Command {
 public:
  // synopsis: the text after "USAGE: name ", e.g. "[-h] [-p PID] [duration]".
  // Multiple lines may be separated by '\n'; they are aligned under the first.
  Command(std::string name, std::string synopsis);
  ~Command();

  // names: "d,delimited" (short,long), "stack-storage-size" (long only) or
  // "d" (short only). A switch sets *target to true when given.
  Command& flag(const std::string& names, bool* target, const std::string& help);
  // An option with a value, parsed into *target (which holds the default).
  // A value that does not parse as the type is a usage error naming the
  // option. arg is the placeholder shown in usage ("PID", "HZ").
  Command& option(const std::string& names, int* target, const std::string& arg,
                  const std::string& help);
  Command& option(const std::string& names, long* target, const std::string& arg,
                  const std::string& help);
  Command& option(const std::string& names, unsigned long* target, const std::string& arg,
                  const std::string& help);
  Command& option(const std::string& names, double* target, const std::string& arg,
                  const std::string& help);
  Command& option(const std::string& names, std::string* target, const std::string& arg,
                  const std::string& help);
  // Optional positional arguments, in order. The value is parsed like an
  // option's; a missing one leaves *target (or keeps it nullopt).
  Command& positional(const std::string& name, std::optional<double>* target,
                      const std::string& help);
  Command& positional(const std::string& name, std::optional<std::string>* target,
                      const std::string& help);
  // A required positional argument (usage error when missing).
  Command& required(const std::string& name, std::string* target, const std::string& help);
  Command& example(const std::string& cmdline, const std::string& comment);

  // Parses argv. nullopt: go on with the tool. Otherwise the process should
  // exit with the returned code: 0 after printing the usage for -h/--help,
  // 2 after a usage error was printed to err.
  std::optional<int> parse(int argc, const char* const* argv, std::ostream& out,
                           std::ostream& err);
  std::optional<int> parse(int argc, char** argv);  // stdout / stderr

  // Whether the option (by its long name, or short name if it has no long
  // one) appeared on the command line.
  bool given(const std::string& name) const;

  // Full usage text (for -h).
  void usage(std::ostream& out) const;
  // A usage error found by the tool itself (conflicting options, bad value):
  // prints "name: message" and the synopsis to err, returns kExitUsage.
  int usage_error(const std::string& message, std::ostream& err) const;
  int usage_error(const std::string& message) const;  // stderr

  const std::string& name() const { return name_; }

 private:
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::cli
