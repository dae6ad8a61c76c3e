// (Over 450 lines on purpose: Command::Impl, the option table beside Boost's
// description, is private to this file; the parser and the usage text both
// read it, and splitting them would make it a header of its own.)
//
// How this works: every option is registered twice, once in our own table
// (names, placeholder, help, a typed pointer to the tool's variable) and once
// in a Boost options_description, where it is either a zero-token switch or a
// one-token string. Boost does the tokenising only: bundles (-adf, -Ti 5),
// sticky values (-F99), "--long=value", "--" and the refusal of unknown or
// abbreviated names (unix_style without allow_guessing). Positionals come back
// from Boost unnamed, in order, and are matched to our table here. Values are
// converted by us (util/strings.hpp: whole string, no junk, no overflow) so
// that a bad one gets a message naming the option as the user knows it
// ("-F/--frequency"). Every conversion is staged and the tool's variables are
// written only when the whole command line is valid, so a failed parse leaves
// all defaults in place.

#include "cli/command.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <charconv>
#include <cmath>
#include <functional>
#include <iostream>
#include <set>
#include <sstream>
#include <variant>
#include <vector>

#include "cli/version.hpp"
#include "util/strings.hpp"

namespace tracekit::cli {

namespace po = boost::program_options;

namespace {

using OptionTarget = std::variant<bool*, int*, long*, unsigned long*, double*, std::string*,
                                  std::vector<std::string>*>;
using PositionalTarget =
    std::variant<std::optional<double>*, std::optional<std::string>*, std::string*>;

struct OptionSpec {
  char short_name = 0;    // 0: long only
  std::string long_name;  // empty: short only
  std::string arg;        // empty for switches
  std::string help;
  OptionTarget target;

  bool is_switch() const { return std::holds_alternative<bool*>(target); }
  // The key given() and our bookkeeping use: the long name, else the letter.
  std::string key() const { return long_name.empty() ? std::string(1, short_name) : long_name; }
  // How errors name the option: "-F/--frequency", "--stack-storage-size", "-d".
  std::string display() const {
    std::string s;
    if (short_name) s = std::string("-") + short_name;
    if (short_name && !long_name.empty()) s += "/";
    if (!long_name.empty()) s += "--" + long_name;
    return s;
  }
  // The left column of the usage text: "-F, --frequency HZ".
  std::string left_column() const {
    std::string s;
    if (short_name) s = std::string("-") + short_name;
    if (short_name && !long_name.empty()) s += ", ";
    if (!long_name.empty()) s += "--" + long_name;
    if (!arg.empty()) s += " " + arg;
    return s;
  }
};

struct PositionalSpec {
  std::string name;
  std::string help;
  PositionalTarget target;
  bool required = false;
};

struct Example {
  std::string cmdline;
  std::string comment;
};

// A usage error found while parsing; carries the one-line message.
struct UsageError {
  std::string message;
};

// Splits "d,delimited" / "delimited" / "d" into letter and long name.
void split_names(const std::string& names, char* short_name, std::string* long_name) {
  auto comma = names.find(',');
  if (comma != std::string::npos) {
    *short_name = names[0];
    *long_name = names.substr(comma + 1);
  } else if (names.size() == 1) {
    *short_name = names[0];
  } else {
    *long_name = names;
  }
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  // from_chars accepts "inf" and "nan"; no option of ours means either.
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// Writes text line by line: the first line after first_prefix, the others
// after next_prefix.
void write_lines(std::ostream& out, const std::string& text, const std::string& first_prefix,
                 const std::string& next_prefix) {
  size_t start = 0;
  bool first = true;
  for (;;) {
    size_t nl = text.find('\n', start);
    std::string line = text.substr(start, nl == std::string::npos ? nl : nl - start);
    std::string prefix = first ? first_prefix : next_prefix;
    // No trailing blanks: a synopsis line of its own or an empty help line.
    if (line.empty()) prefix.erase(prefix.find_last_not_of(' ') + 1);
    out << prefix << line << '\n';
    if (nl == std::string::npos) return;
    start = nl + 1;
    first = false;
  }
}

}  // namespace

struct Command::Impl {
  std::string synopsis;
  std::vector<OptionSpec> options;
  std::vector<PositionalSpec> positionals;
  std::vector<Example> examples;
  std::set<std::string> given;

  Impl() {
    OptionSpec help;
    help.short_name = 'h';
    help.long_name = "help";
    help.help = "this usage message";
    help.target = static_cast<bool*>(nullptr);
    options.push_back(std::move(help));
  }

  void add(const std::string& names, OptionTarget target, const std::string& arg,
           const std::string& help) {
    OptionSpec spec;
    split_names(names, &spec.short_name, &spec.long_name);
    spec.arg = arg;
    spec.help = help;
    spec.target = target;
    options.push_back(std::move(spec));
  }

  const OptionSpec* find_short(char c) const {
    for (const auto& o : options)
      if (o.short_name == c) return &o;
    return nullptr;
  }
  const OptionSpec* find_by_key(const std::string& key) const {
    for (const auto& o : options)
      if (o.key() == key) return &o;
    return nullptr;
  }
  // Boost names options in errors by "--long" when there is one, else by
  // "-s", whatever the user typed.
  const OptionSpec* find_boost_name(const std::string& name) const {
    if (name.rfind("--", 0) == 0) {
      for (const auto& o : options)
        if (!o.long_name.empty() && "--" + o.long_name == name) return &o;
    } else if (name.size() == 2 && name[0] == '-') {
      return find_short(name[1]);
    }
    return nullptr;
  }

  po::options_description boost_description() const {
    po::options_description desc;
    for (const auto& o : options) {
      // Boost's order is "long,s"; ",s" is a short-only option.
      std::string names = o.long_name;
      if (o.short_name) names += std::string(",") + o.short_name;
      if (o.is_switch())
        desc.add_options()(names.c_str(), po::bool_switch());
      else
        desc.add_options()(names.c_str(), po::value<std::string>());
    }
    // Every command takes --version (not in the usage rows: the man pages
    // say it), as -h wins over the rest of the command line.
    desc.add_options()("version", po::bool_switch());
    return desc;
  }

  // Boost reports an unknown option by its whole token: "-dx" for a bundle,
  // "--foo=3" for a long one. Name just the part that is wrong.
  std::string unknown_name(const std::string& token) const {
    if (token.rfind("--", 0) == 0) return token.substr(0, token.find('='));
    if (token.size() > 2 && token[0] == '-') {
      for (size_t i = 1; i < token.size(); ++i) {
        const OptionSpec* o = find_short(token[i]);
        if (!o) return std::string("-") + token[i];
        if (!o->is_switch()) break;  // the rest of the token is its value
      }
    }
    return token;
  }

  std::string syntax_message(const po::invalid_command_line_syntax& e) const {
    const OptionSpec* o = find_boost_name(e.get_option_name());
    std::string name = o ? o->display() : e.get_option_name();
    switch (e.kind()) {
      case po::invalid_syntax::missing_parameter:
        return "missing value for " + name;
      case po::invalid_syntax::extra_parameter:
        return "option " + name + " takes no value";
      case po::invalid_syntax::empty_adjacent_parameter:
        return "invalid value '' for " + name;
      default:
        return e.what();
    }
  }

  // Converts text into the target's type; nullopt when it does not parse.
  static std::optional<std::function<void()>> stage(const OptionTarget& target,
                                                    const std::string& text) {
    return std::visit(
        [&](auto* p) -> std::optional<std::function<void()>> {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, bool>) {
            return [p] {
              if (p) *p = true;
            };
          } else if constexpr (std::is_same_v<T, std::string>) {
            return [p, text] { *p = text; };
          } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
            return [p, text] { p->push_back(text); };  // repeatable: every value kept
          } else if constexpr (std::is_same_v<T, double>) {
            auto v = parse_double(text);
            if (!v) return std::nullopt;
            return [p, v] { *p = *v; };
          } else {
            auto v = parse_int<T>(text);
            if (!v) return std::nullopt;
            return [p, v] { *p = *v; };
          }
        },
        target);
  }

  static std::optional<std::function<void()>> stage(const PositionalTarget& target,
                                                    const std::string& text) {
    return std::visit(
        [&](auto* p) -> std::optional<std::function<void()>> {
          using T = std::remove_pointer_t<decltype(p)>;
          if constexpr (std::is_same_v<T, std::optional<double>>) {
            auto v = parse_double(text);
            if (!v) return std::nullopt;
            return [p, v] { *p = *v; };
          } else {
            return [p, text] { *p = text; };
          }
        },
        target);
  }

  enum class Asked { kRun, kHelp, kVersion };
  // Whether -h/--help or --version was given (nothing else is checked then).
  // Throws UsageError; writes the tool's variables only on success.
  Asked parse(int argc, const char* const* argv) {
    po::options_description desc = boost_description();
    // unix_style minus allow_guessing: "--freq" must not mean "--frequency".
    int style = po::command_line_style::unix_style & ~po::command_line_style::allow_guessing;
    std::vector<po::option> parsed;
    try {
      parsed = po::command_line_parser(argc, argv).options(desc).style(style).run().options;
    } catch (const po::unknown_option& e) {
      throw UsageError{"unrecognised option '" + elide(unknown_name(e.get_option_name())) + "'"};
    } catch (const po::invalid_command_line_syntax& e) {
      throw UsageError{syntax_message(e)};
    } catch (const po::error& e) {
      throw UsageError{e.what()};
    }

    // -h wins over everything Boost let through (bad values, missing
    // arguments): whoever asks for help gets it.
    for (const po::option& opt : parsed) {
      if (opt.string_key == "help") {
        given = {"help"};
        return Asked::kHelp;
      }
    }
    for (const po::option& opt : parsed) {
      if (opt.string_key == "version") {
        given = {"version"};
        return Asked::kVersion;
      }
    }

    std::set<std::string> seen;
    std::vector<std::function<void()>> writes;
    size_t next_positional = 0;
    for (const po::option& opt : parsed) {
      if (opt.position_key >= 0 || opt.string_key.empty()) {
        const std::string& text = opt.value.empty() ? std::string() : opt.value.front();
        if (next_positional >= positionals.size())
          throw UsageError{"unexpected argument '" + elide(text) + "'"};
        const PositionalSpec& p = positionals[next_positional++];
        auto write = stage(p.target, text);
        if (!write) throw UsageError{"invalid value '" + elide(text) + "' for " + p.name};
        writes.push_back(std::move(*write));
        seen.insert(p.name);
        continue;
      }
      // Boost keys an option by its long name, or by "-s" when it has none.
      const OptionSpec* o = opt.string_key.size() == 2 && opt.string_key[0] == '-'
                                ? find_short(opt.string_key[1])
                                : find_by_key(opt.string_key);
      if (!o) throw UsageError{"unrecognised option '" + elide(opt.string_key) + "'"};
      const std::string& text = opt.value.empty() ? std::string() : opt.value.front();
      auto write = stage(o->target, text);
      if (!write) throw UsageError{"invalid value '" + elide(text) + "' for " + o->display()};
      writes.push_back(std::move(*write));  // a repeated option: the last one wins
      seen.insert(o->key());
    }
    for (size_t i = next_positional; i < positionals.size(); ++i)
      if (positionals[i].required)
        throw UsageError{"missing required argument '" + positionals[i].name + "'"};

    for (auto& w : writes) w();
    given = std::move(seen);
    return Asked::kRun;
  }
};

Command::Command(std::string name, std::string synopsis)
    : name_(std::move(name)), impl_(std::make_unique<Impl>()) {
  impl_->synopsis = std::move(synopsis);
}

Command::~Command() = default;

Command& Command::flag(const std::string& names, bool* target, const std::string& help) {
  impl_->add(names, target, "", help);
  return *this;
}
Command& Command::option(const std::string& names, int* target, const std::string& arg,
                         const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}
Command& Command::option(const std::string& names, long* target, const std::string& arg,
                         const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}
Command& Command::option(const std::string& names, unsigned long* target, const std::string& arg,
                         const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}
Command& Command::option(const std::string& names, double* target, const std::string& arg,
                         const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}
Command& Command::option(const std::string& names, std::string* target, const std::string& arg,
                         const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}

Command& Command::option(const std::string& names, std::vector<std::string>* target,
                         const std::string& arg, const std::string& help) {
  impl_->add(names, target, arg, help);
  return *this;
}

Command& Command::positional(const std::string& name, std::optional<double>* target,
                             const std::string& help) {
  impl_->positionals.push_back({name, help, target, false});
  return *this;
}
Command& Command::positional(const std::string& name, std::optional<std::string>* target,
                             const std::string& help) {
  impl_->positionals.push_back({name, help, target, false});
  return *this;
}
Command& Command::required(const std::string& name, std::string* target, const std::string& help) {
  impl_->positionals.push_back({name, help, target, true});
  return *this;
}

Command& Command::example(const std::string& cmdline, const std::string& comment) {
  impl_->examples.push_back({cmdline, comment});
  return *this;
}

std::optional<int> Command::parse(int argc, const char* const* argv, std::ostream& out,
                                  std::ostream& err) {
  try {
    switch (impl_->parse(argc, argv)) {
      case Impl::Asked::kHelp:
        usage(out);
        return kExitOk;
      case Impl::Asked::kVersion:
        out << version_line(name_) << "\n";
        return kExitOk;
      case Impl::Asked::kRun:
        break;
    }
  } catch (const UsageError& e) {
    return usage_error(e.message, err);
  }
  return std::nullopt;
}

std::optional<int> Command::parse(int argc, char** argv) {
  return parse(argc, argv, std::cout, std::cerr);
}

bool Command::given(const std::string& name) const { return impl_->given.count(name) > 0; }

namespace {

// "USAGE: name " and the synopsis, continuation lines aligned under the first.
void write_synopsis(std::ostream& out, const std::string& name, const std::string& synopsis,
                    size_t indent) {
  write_lines(out, synopsis, "USAGE: " + name + " ", std::string(indent, ' '));
}

// One aligned row: left column padded to width, then "# " and the text;
// further lines of the text line up under its first character.
void write_row(std::ostream& out, size_t indent, const std::string& left, size_t width,
               const std::string& text) {
  std::string pad(indent, ' ');
  if (text.empty()) {
    out << pad << left << '\n';
    return;
  }
  std::string first = pad + left + std::string(width - left.size(), ' ') + " # ";
  write_lines(out, text, first, std::string(first.size(), ' '));
}

}  // namespace

void Command::usage(std::ostream& out) const {
  const size_t indent = std::string("USAGE: ").size() + name_.size() + 1;
  write_synopsis(out, name_, impl_->synopsis, indent);

  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& o : impl_->options) rows.emplace_back(o.left_column(), o.help);
  for (const auto& p : impl_->positionals) rows.emplace_back(p.name, p.help);
  size_t width = 0;
  for (const auto& r : rows) width = std::max(width, r.first.size());
  for (const auto& r : rows) write_row(out, indent, r.first, width, r.second);

  if (impl_->examples.empty()) return;
  out << "  examples:\n";
  size_t ex_width = 0;
  for (const auto& e : impl_->examples) ex_width = std::max(ex_width, e.cmdline.size());
  for (const auto& e : impl_->examples) write_row(out, 7, e.cmdline, ex_width, e.comment);
}

int Command::usage_error(const std::string& message, std::ostream& err) const {
  err << name_ << ": " << message << '\n';
  write_synopsis(err, name_, impl_->synopsis, std::string("USAGE: ").size() + name_.size() + 1);
  return kExitUsage;
}

int Command::usage_error(const std::string& message) const {
  return usage_error(message, std::cerr);
}

std::optional<int> Command::positive_id(const std::string& name, int value,
                                        const std::string& what, std::optional<int>* out) const {
  if (!given(name)) return std::nullopt;
  if (value <= 0) return usage_error("invalid " + what + " " + std::to_string(value));
  *out = value;
  return std::nullopt;
}

std::optional<int> Command::positive_seconds(const std::string& name, double value,
                                             std::optional<double>* out) const {
  if (!given(name)) return std::nullopt;
  if (!(value > 0)) return usage_error("-" + name + " needs a positive number of seconds");
  *out = value;
  return std::nullopt;
}

}  // namespace tracekit::cli
