#include "cli/command.hpp"
#include "cli/version.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace tracekit::cli {
namespace {

// profile's options, with bcc's defaults.
struct ProfileOptions {
  std::string pids;
  std::string tids;
  bool user_only = false;
  bool kernel_only = false;
  int frequency = 49;
  long count = 0;
  bool delimited = false;
  bool annotate = false;
  bool idle = false;
  bool folded = false;
  unsigned long stack_storage = 16384;
  int cpu = -1;
  double min_ms = 0.5;
  std::optional<double> duration;

  // One line with every field, so a table row states the whole outcome.
  std::string str() const {
    std::ostringstream s;
    s << "p=" << pids << " L=" << tids << " U=" << user_only << " K=" << kernel_only
      << " F=" << frequency << " c=" << count << " d=" << delimited << " a=" << annotate
      << " I=" << idle << " f=" << folded << " ss=" << stack_storage << " C=" << cpu
      << " m=" << min_ms << " dur=" << (duration ? std::to_string(*duration) : "none");
    return s.str();
  }
};

const char kProfileSynopsis[] =
    "[-h] [-p PID[,PID..] | -L TID[,TID..]] [-U | -K] [-F HZ | -c COUNT]\n"
    "[-d] [-a] [-I] [-f] [--stack-storage-size N] [-C CPU] [duration]";

void define_profile(Command& cmd, ProfileOptions& o) {
  cmd.option("p,pid", &o.pids, "PID", "profile these processes only (comma separated)")
      .option("L,tid", &o.tids, "TID", "profile these threads only (comma separated)")
      .flag("U,user-stacks-only", &o.user_only, "show user space stacks only")
      .flag("K,kernel-stacks-only", &o.kernel_only, "show kernel space stacks only")
      .option("F,frequency", &o.frequency, "HZ", "sample frequency, Hertz (default 49)")
      .option("c,count", &o.count, "COUNT", "sample period, number of events")
      .flag("d,delimited", &o.delimited, "insert delimiter between kernel/user stacks")
      .flag("a,annotations", &o.annotate, "add _[k] annotations to kernel frames")
      .flag("I,include-idle", &o.idle, "include CPU idle stacks")
      .flag("f,folded", &o.folded, "output folded format, one line per stack")
      .option("stack-storage-size", &o.stack_storage, "N",
              "the number of unique stack traces that can be stored\n"
              "and displayed (default 16384)")
      .option("C,cpu", &o.cpu, "CPU", "cpu number to run profile on")
      .option("m", &o.min_ms, "MS", "minimum sample gap, milliseconds")
      .positional("duration", &o.duration, "seconds to trace (default: until Ctrl-C)")
      .example("profile", "profile stack traces at 49 Hertz until Ctrl-C")
      .example("profile -F 99", "profile stack traces at 99 Hertz")
      .example("profile -c 1000000", "profile stack traces every 1 in a million events")
      .example("profile -f 5", "output in folded format for flame graphs")
      .example("profile -p 185", "only profile process with PID 185");
}

struct Outcome {
  std::optional<int> rc;
  std::string out;
  std::string err;
};

Outcome run(Command& cmd, const std::vector<std::string>& args) {
  std::vector<const char*> argv = {cmd.name().c_str()};
  for (const auto& a : args) argv.push_back(a.c_str());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  Outcome r;
  r.rc = cmd.parse(static_cast<int>(argv.size() - 1), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

const char kProfileUsage[] =
    "USAGE: profile [-h] [-p PID[,PID..] | -L TID[,TID..]] [-U | -K] [-F HZ | -c COUNT]\n"
    "               [-d] [-a] [-I] [-f] [--stack-storage-size N] [-C CPU] [duration]\n"
    "               -h, --help               # this usage message\n"
    "               -p, --pid PID            # profile these processes only (comma separated)\n"
    "               -L, --tid TID            # profile these threads only (comma separated)\n"
    "               -U, --user-stacks-only   # show user space stacks only\n"
    "               -K, --kernel-stacks-only # show kernel space stacks only\n"
    "               -F, --frequency HZ       # sample frequency, Hertz (default 49)\n"
    "               -c, --count COUNT        # sample period, number of events\n"
    "               -d, --delimited          # insert delimiter between kernel/user stacks\n"
    "               -a, --annotations        # add _[k] annotations to kernel frames\n"
    "               -I, --include-idle       # include CPU idle stacks\n"
    "               -f, --folded             # output folded format, one line per stack\n"
    "               --stack-storage-size N   # the number of unique stack traces that can be "
    "stored\n"
    "                                          and displayed (default 16384)\n"
    "               -C, --cpu CPU            # cpu number to run profile on\n"
    "               -m MS                    # minimum sample gap, milliseconds\n"
    "               duration                 # seconds to trace (default: until Ctrl-C)\n"
    "  examples:\n"
    "       profile            # profile stack traces at 49 Hertz until Ctrl-C\n"
    "       profile -F 99      # profile stack traces at 99 Hertz\n"
    "       profile -c 1000000 # profile stack traces every 1 in a million events\n"
    "       profile -f 5       # output in folded format for flame graphs\n"
    "       profile -p 185     # only profile process with PID 185\n";

const char kProfileSynopsisLines[] =
    "USAGE: profile [-h] [-p PID[,PID..] | -L TID[,TID..]] [-U | -K] [-F HZ | -c COUNT]\n"
    "               [-d] [-a] [-I] [-f] [--stack-storage-size N] [-C CPU] [duration]\n";

const std::string kDefaults = ProfileOptions{}.str();

struct ParseCase {
  std::vector<std::string> args;
  std::string want;  // ProfileOptions::str() after a successful parse
};

TEST(CliCommandTest, ParsesValidCommandLines) {
  const std::vector<ParseCase> cases = {
      {{}, kDefaults},
      {{"-adf"}, "p= L= U=0 K=0 F=49 c=0 d=1 a=1 I=0 f=1 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-d", "-a", "-f"}, "p= L= U=0 K=0 F=49 c=0 d=1 a=1 I=0 f=1 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-F99"}, "p= L= U=0 K=0 F=99 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-F", "99"}, "p= L= U=0 K=0 F=99 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"--frequency", "99"},
       "p= L= U=0 K=0 F=99 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"--frequency=99"}, "p= L= U=0 K=0 F=99 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      // A switch bundled with an option that takes the next token or the rest.
      {{"-dF", "99"}, "p= L= U=0 K=0 F=99 c=0 d=1 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-dF99"}, "p= L= U=0 K=0 F=99 c=0 d=1 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-Ic", "1000000", "5"},
       "p= L= U=0 K=0 F=49 c=1000000 d=0 a=0 I=1 f=0 ss=16384 C=-1 m=0.5 dur=5.000000"},
      {{"-p185"}, "p=185 L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"-p", "185,186", "-U"},
       "p=185,186 L= U=1 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"--pid=7", "--kernel-stacks-only"},
       "p=7 L= U=0 K=1 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
      {{"--stack-storage-size", "1024"},
       "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=1024 C=-1 m=0.5 dur=none"},
      {{"--stack-storage-size=18446744073709551615"},
       "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=18446744073709551615 C=-1 m=0.5 dur=none"},
      // A negative number after an option is its value, not an option.
      {{"-C", "-2"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-2 m=0.5 dur=none"},
      {{"-C3"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=3 m=0.5 dur=none"},
      {{"-m", "2.25"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=2.25 dur=none"},
      {{"-m0.1"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.1 dur=none"},
      {{"-f", "5"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=1 ss=16384 C=-1 m=0.5 dur=5.000000"},
      {{"0.5"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=0.500000"},
      {{"10", "-d"}, "p= L= U=0 K=0 F=49 c=0 d=1 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=10.000000"},
      {{"--", "5"}, "p= L= U=0 K=0 F=49 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=5.000000"},
      // Repeated: the last one wins, as with getopt.
      {{"-F", "10", "-F", "20"},
       "p= L= U=0 K=0 F=20 c=0 d=0 a=0 I=0 f=0 ss=16384 C=-1 m=0.5 dur=none"},
  };
  for (const auto& c : cases) {
    ProfileOptions o;
    Command cmd("profile", kProfileSynopsis);
    define_profile(cmd, o);
    Outcome r = run(cmd, c.args);
    std::string args;
    for (const auto& a : c.args) args += "'" + a + "' ";
    EXPECT_EQ(r.rc, std::nullopt) << args << r.err;
    EXPECT_EQ(o.str(), c.want) << args;
    EXPECT_EQ(r.out, "") << args;
    EXPECT_EQ(r.err, "") << args;
  }
}

struct ErrorCase {
  std::vector<std::string> args;
  std::string want;  // the first line on stderr
};

TEST(CliCommandTest, RejectsBadCommandLines) {
  const std::vector<ErrorCase> cases = {
      {{"-x"}, "profile: unrecognised option '-x'"},
      {{"-dx"}, "profile: unrecognised option '-x'"},  // the bad letter, not the bundle
      {{"-adfq", "5"}, "profile: unrecognised option '-q'"},
      {{"--bogus"}, "profile: unrecognised option '--bogus'"},
      {{"--bogus=3"}, "profile: unrecognised option '--bogus'"},
      // No abbreviations: "--freq" is not "--frequency".
      {{"--freq", "99"}, "profile: unrecognised option '--freq'"},
      {{"--stack", "5"}, "profile: unrecognised option '--stack'"},
      {{"-F", "abc"}, "profile: invalid value 'abc' for -F/--frequency"},
      {{"-Fabc"}, "profile: invalid value 'abc' for -F/--frequency"},
      {{"-F", "99x"}, "profile: invalid value '99x' for -F/--frequency"},
      {{"-F", "99999999999"}, "profile: invalid value '99999999999' for -F/--frequency"},
      {{"--frequency="}, "profile: invalid value '' for -F/--frequency"},
      {{"--stack-storage-size", "-1"}, "profile: invalid value '-1' for --stack-storage-size"},
      {{"-m", "fast"}, "profile: invalid value 'fast' for -m"},
      {{"-m", "nan"}, "profile: invalid value 'nan' for -m"},
      {{"-F"}, "profile: missing value for -F/--frequency"},
      {{"-c", "-d"}, "profile: missing value for -c/--count"},
      {{"--stack-storage-size"}, "profile: missing value for --stack-storage-size"},
      {{"--folded=1"}, "profile: option -f/--folded takes no value"},
      {{"five"}, "profile: invalid value 'five' for duration"},
      {{"5", "6"}, "profile: unexpected argument '6'"},
      // What the user typed is echoed up to 64 bytes, then "...".
      {{"-F", std::string(100000, '9')},
       "profile: invalid value '" + std::string(64, '9') + "...' for -F/--frequency"},
      {{"5", std::string(100000, 'x')},
       "profile: unexpected argument '" + std::string(64, 'x') + "...'"},
      {{"--" + std::string(100000, 'y')},
       "profile: unrecognised option '--" + std::string(62, 'y') + "...'"},
  };
  for (const auto& c : cases) {
    ProfileOptions o;
    Command cmd("profile", kProfileSynopsis);
    define_profile(cmd, o);
    Outcome r = run(cmd, c.args);
    std::string args;
    for (const auto& a : c.args) args += "'" + a + "' ";
    EXPECT_EQ(r.rc, std::optional<int>(kExitUsage)) << args;
    EXPECT_EQ(r.err, c.want + "\n" + kProfileSynopsisLines) << args;
    EXPECT_EQ(r.out, "") << args;
    // Nothing is written unless the whole command line is good.
    EXPECT_EQ(o.str(), kDefaults) << args;
  }
}

// Issue 38: --version was a usage error everywhere. Every command takes it
// (wherever it is on the line, as -h), prints one line on stdout, exit 0;
// -h wins over it.
TEST(CliCommandTest, VersionPrintsTheVersionAndCommit) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--version"}, {"-F", "99", "--version", "5"}, {"--version", "x"}}) {
    ProfileOptions o;
    Command cmd("profile", kProfileSynopsis);
    define_profile(cmd, o);
    Outcome r = run(cmd, args);
    EXPECT_EQ(r.rc, std::optional<int>(kExitOk));
    EXPECT_EQ(r.out, std::string("profile (tracekit ") + kVersion + ", commit " + kCommit + ")\n");
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(o.str(), kDefaults);
  }
  EXPECT_EQ(version_line("tracekit"), std::string("tracekit ") + kVersion + ", commit " + kCommit);
  ProfileOptions o;
  Command cmd("profile", kProfileSynopsis);
  define_profile(cmd, o);
  EXPECT_EQ(run(cmd, {"--version", "-h"}).out, kProfileUsage);
  // Not an abbreviation of anything, and no value.
  Command c2("profile", kProfileSynopsis);
  define_profile(c2, o);
  EXPECT_EQ(run(c2, {"--version=1"}).rc, std::optional<int>(kExitUsage));
}

TEST(CliCommandTest, HelpPrintsUsageOnStdout) {
  for (const char* flag : {"-h", "--help"}) {
    ProfileOptions o;
    Command cmd("profile", kProfileSynopsis);
    define_profile(cmd, o);
    Outcome r = run(cmd, {flag});
    EXPECT_EQ(r.rc, std::optional<int>(kExitOk)) << flag;
    EXPECT_EQ(r.out, kProfileUsage) << flag;
    EXPECT_EQ(r.err, "") << flag;
  }
}

TEST(CliCommandTest, HelpWinsOverBadValues) {
  ProfileOptions o;
  Command cmd("profile", kProfileSynopsis);
  define_profile(cmd, o);
  Outcome r = run(cmd, {"-F", "abc", "-dh"});
  EXPECT_EQ(r.rc, std::optional<int>(kExitOk));
  EXPECT_EQ(r.out, kProfileUsage);
  EXPECT_EQ(o.str(), kDefaults);
}

TEST(CliCommandTest, UsageMatchesCommandsUsageFunction) {
  ProfileOptions o;
  Command cmd("profile", kProfileSynopsis);
  define_profile(cmd, o);
  std::ostringstream out;
  cmd.usage(out);
  EXPECT_EQ(out.str(), kProfileUsage);
}

TEST(CliCommandTest, Given) {
  ProfileOptions o;
  Command cmd("profile", kProfileSynopsis);
  define_profile(cmd, o);
  ASSERT_EQ(run(cmd, {"-KU", "--frequency=49", "-m", "1", "3"}).rc, std::nullopt);
  // By long name, or by the letter for a short-only option.
  EXPECT_TRUE(cmd.given("kernel-stacks-only"));
  EXPECT_TRUE(cmd.given("user-stacks-only"));
  EXPECT_TRUE(cmd.given("frequency"));  // given, even though equal to the default
  EXPECT_TRUE(cmd.given("m"));
  EXPECT_TRUE(cmd.given("duration"));
  EXPECT_FALSE(cmd.given("K"));  // options with a long name are known by it
  EXPECT_FALSE(cmd.given("pid"));
  EXPECT_FALSE(cmd.given("delimited"));
  EXPECT_FALSE(cmd.given("stack-storage-size"));
  EXPECT_FALSE(cmd.given("help"));
  EXPECT_FALSE(cmd.given("no-such-option"));
}

TEST(CliCommandTest, ToolReportsConflictWithUsageError) {
  ProfileOptions o;
  Command cmd("profile", kProfileSynopsis);
  define_profile(cmd, o);
  ASSERT_EQ(run(cmd, {"-K", "-U"}).rc, std::nullopt);
  ASSERT_TRUE(cmd.given("kernel-stacks-only") && cmd.given("user-stacks-only"));
  std::ostringstream err;
  EXPECT_EQ(cmd.usage_error("-K and -U are mutually exclusive", err), kExitUsage);
  EXPECT_EQ(err.str(),
            std::string("profile: -K and -U are mutually exclusive\n") + kProfileSynopsisLines);
}

// stackcount: a required positional and a short-and-sticky interval.
struct StackcountOptions {
  int interval = 0;
  bool timestamp = false;
  bool offset = false;
  bool verbose = false;
  double duration = 0;
  std::string pattern;
};

void define_stackcount(Command& cmd, StackcountOptions& o) {
  cmd.option("i,interval", &o.interval, "INTERVAL", "summary interval, seconds")
      .flag("T,timestamp", &o.timestamp, "include timestamp on output")
      .flag("s,offset", &o.offset, "show address offsets")
      .flag("v,verbose", &o.verbose, "show raw addresses")
      .option("D,duration", &o.duration, "DURATION", "total duration of trace, seconds")
      .required("pattern", &o.pattern, "search expression for events")
      .example("stackcount submit_bio", "count kernel stack traces for submit_bio")
      .example("stackcount -Ti 5 ip_output", "output every 5 seconds, with timestamps");
}

TEST(CliCommandTest, RequiredPositional) {
  struct Case {
    std::vector<std::string> args;
    std::optional<int> rc;
    std::string want;  // "i T s v D pattern" or the first stderr line
  };
  const std::vector<Case> cases = {
      {{"-Ti", "5", "ip_output"}, std::nullopt, "5 1 0 0 0 ip_output"},
      {{"-sv", "submit_bio"}, std::nullopt, "0 0 1 1 0 submit_bio"},
      {{"-Tsvi1", "-D", "2.5", "tcp_send*"}, std::nullopt, "1 1 1 1 2.5 tcp_send*"},
      {{"--interval=2", "--", "-weird-name"}, std::nullopt, "2 0 0 0 0 -weird-name"},
      {{}, kExitUsage, "stackcount: missing required argument 'pattern'"},
      {{"-Ti", "5"}, kExitUsage, "stackcount: missing required argument 'pattern'"},
      {{"-Ti"}, kExitUsage, "stackcount: missing value for -i/--interval"},
      {{"a", "b"}, kExitUsage, "stackcount: unexpected argument 'b'"},
      {{"-h"}, kExitOk, ""},  // help needs no pattern
  };
  for (const auto& c : cases) {
    StackcountOptions o;
    Command cmd("stackcount", "[-h] [-p PID] [-i INTERVAL] [-T] [-s] [-v] pattern");
    define_stackcount(cmd, o);
    Outcome r = run(cmd, c.args);
    std::string args;
    for (const auto& a : c.args) args += "'" + a + "' ";
    EXPECT_EQ(r.rc, c.rc) << args;
    if (c.rc == std::nullopt) {
      std::ostringstream got;
      got << o.interval << " " << o.timestamp << " " << o.offset << " " << o.verbose << " "
          << o.duration << " " << o.pattern;
      EXPECT_EQ(got.str(), c.want) << args;
      EXPECT_TRUE(cmd.given("pattern")) << args;
    } else if (c.rc == kExitUsage) {
      EXPECT_EQ(first_line(r.err), c.want) << args;
      EXPECT_EQ(o.pattern, "") << args;
    }
  }
}

TEST(CliCommandTest, StackcountUsage) {
  StackcountOptions o;
  Command cmd("stackcount", "[-h] [-p PID] [-i INTERVAL] [-T] [-s] [-v] pattern");
  define_stackcount(cmd, o);
  std::ostringstream out;
  cmd.usage(out);
  EXPECT_EQ(out.str(),
            "USAGE: stackcount [-h] [-p PID] [-i INTERVAL] [-T] [-s] [-v] pattern\n"
            "                  -h, --help              # this usage message\n"
            "                  -i, --interval INTERVAL # summary interval, seconds\n"
            "                  -T, --timestamp         # include timestamp on output\n"
            "                  -s, --offset            # show address offsets\n"
            "                  -v, --verbose           # show raw addresses\n"
            "                  -D, --duration DURATION # total duration of trace, seconds\n"
            "                  pattern                 # search expression for events\n"
            "  examples:\n"
            "       stackcount submit_bio      # count kernel stack traces for submit_bio\n"
            "       stackcount -Ti 5 ip_output # output every 5 seconds, with timestamps\n");
}

TEST(CliCommandTest, MinimalUsage) {
  // No options but -h, no examples, an empty help and an example without a
  // comment: no "examples:" block, no dangling "#".
  bool quiet = false;
  Command bare("reset-tracing", "[-hq]");
  std::ostringstream out;
  bare.usage(out);
  EXPECT_EQ(out.str(),
            "USAGE: reset-tracing [-hq]\n"
            "                     -h, --help # this usage message\n");

  Command cmd("reset-tracing", "[-hq]");
  cmd.flag("q", &quiet, "").example("reset-tracing", "");
  std::ostringstream out2;
  cmd.usage(out2);
  EXPECT_EQ(out2.str(),
            "USAGE: reset-tracing [-hq]\n"
            "                     -h, --help # this usage message\n"
            "                     -q\n"
            "  examples:\n"
            "       reset-tracing\n");
  ASSERT_EQ(run(cmd, {"-q"}).rc, std::nullopt);
  EXPECT_TRUE(quiet);
  EXPECT_TRUE(cmd.given("q"));
}

TEST(CliCommandTest, PositionalStringIsOptional) {
  std::optional<std::string> filter;
  std::string spec;
  Command cmd("kprobe", "[-h] kprobe_definition [filter]");
  cmd.required("kprobe_definition", &spec, "p:func, r:func")
      .positional("filter", &filter, "kernel filter expression");
  ASSERT_EQ(run(cmd, {"p:do_sys_open"}).rc, std::nullopt);
  EXPECT_EQ(spec, "p:do_sys_open");
  EXPECT_EQ(filter, std::nullopt);
  EXPECT_FALSE(cmd.given("filter"));
  ASSERT_EQ(run(cmd, {"p:do_sys_open", "mode != 0"}).rc, std::nullopt);
  EXPECT_EQ(filter, std::optional<std::string>("mode != 0"));
  EXPECT_TRUE(cmd.given("filter"));
}

// A list option keeps every value, in order; "the last one wins" is for
// the others.
TEST(CliCommandTest, ListOptionKeepsEveryValue) {
  std::vector<std::string> files;
  std::string format;
  Command cmd("profile", "[-h] [-o FILE] [--format F]");
  cmd.option("o,output", &files, "FILE", "write here").option("format", &format, "F", "as");
  auto r = run(cmd, {"-o", "a.svg", "--output=b.pb.gz", "-oc.json", "--format", "x",
                     "--format", "svg"});
  ASSERT_FALSE(r.rc) << r.err;
  EXPECT_EQ(files, (std::vector<std::string>{"a.svg", "b.pb.gz", "c.json"}));
  EXPECT_EQ(format, "svg");
  EXPECT_TRUE(cmd.given("output"));

  // A failed parse writes nothing, lists included.
  std::vector<std::string> more;
  Command bad("profile", "[-h] [-o FILE]");
  bad.option("o,output", &more, "FILE", "write here");
  EXPECT_EQ(run(bad, {"-o", "a.svg", "-x"}).rc, 2);
  EXPECT_TRUE(more.empty());
}

}  // namespace
}  // namespace tracekit::cli
