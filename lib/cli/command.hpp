// Command lines, perf-tools style, on Boost.ProgramOptions.
//
// A Command knows its options, positional arguments and examples, parses
// argv (short options bundle: -adf, -Ti 5, -F99; long ones take "--long V" or
// "--long=V"; no abbreviation of long options; "--" ends the options; a
// repeated option: the last one wins, but a list option keeps them all),
// and prints the usage text. Exactly:
//
//   USAGE: profile [-h] [-p PID[,PID..]] [-F HZ] [-f]
//                  [--stack-storage-size N] [duration]
//                  -h, --help             # this usage message
//                  -p, --pid PID          # profile these processes only
//                  -F, --frequency HZ     # sample frequency, Hertz (default 49)
//                  -f, --folded           # output folded format, one line per stack
//                  --stack-storage-size N # the number of unique stack traces that
//                                           can be stored (default 16384)
//                  duration               # seconds to trace (default: until Ctrl-C)
//     examples:
//          profile             # profile stack traces at 49 Hertz until Ctrl-C
//          profile -F 99 -f 30 # 99 Hertz, folded output, for 30 seconds
//
// Layout: synopsis continuation lines and option rows start under the
// synopsis (column len("USAGE: name ")). Option rows, in the order declared
// (-h/--help first, added automatically), then positionals: the left column
// ("-s, --long ARG", "--long ARG", "-s ARG", "name") padded to the longest
// one, then " # " and the help; a help text's further lines ('\n') line up
// under its first character; an empty help prints no "#". "  examples:"
// follows when there are examples, each at 7 spaces, command lines padded to
// the longest, then " # " and the comment. No trailing blanks anywhere.
//
// Usage errors name what is wrong in one line:
//   profile: unrecognised option '-x'      (the bad letter of a bundle)
//   profile: invalid value 'abc' for -F/--frequency
//   profile: missing value for -F/--frequency
//   profile: option -f/--folded takes no value
//   profile: unexpected argument '6'
//   profile: missing required argument 'pattern'
// followed by the USAGE synopsis lines only (not the option rows).
//
// Exit codes (every tool's man page says them): 0 after -h/--help (usage on stdout); 2 for a usage
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
  // option: integers are decimal, the whole token, in range (no sign for
  // unsigned long); doubles must be finite. arg is the placeholder shown in
  // usage ("PID", "HZ").
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
  // A repeatable option: each value given is appended, in order ("-o a -o b").
  Command& option(const std::string& names, std::vector<std::string>* target,
                  const std::string& arg, const std::string& help);
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
  // exit with the returned code: 0 after printing the usage for -h/--help
  // (or the version line for --version, which every command takes: see
  // cli/version.hpp),
  // 2 after a usage error was printed to err. -h wins over bad values. The
  // targets are written only when the whole command line is valid: after an
  // error they all keep their defaults.
  std::optional<int> parse(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
  std::optional<int> parse(int argc, char** argv);  // stdout / stderr

  // Whether the option (by its long name, or short name if it has no long
  // one) or the positional (by its name) appeared on the command line of
  // the last successful parse.
  bool given(const std::string& name) const;

  // Full usage text (for -h).
  void usage(std::ostream& out) const;
  // A usage error found by the tool itself (conflicting options, bad value):
  // prints "name: message" and the synopsis to err, returns kExitUsage.
  int usage_error(const std::string& message, std::ostream& err) const;
  int usage_error(const std::string& message) const;  // stderr

  // Checks of common option values, after parse(): when option name was
  // given, its value must be positive, else a usage error ("invalid PID 0",
  // "-d needs a positive number of seconds") whose exit code is returned;
  // a valid value is stored in *out. nullopt: go on.
  std::optional<int> positive_id(const std::string& name, int value, const std::string& what,
                                 std::optional<int>* out) const;
  std::optional<int> positive_seconds(const std::string& name, double value,
                                      std::optional<double>* out) const;

  const std::string& name() const { return name_; }

 private:
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tracekit::cli
