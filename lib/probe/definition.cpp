#include "probe/definition.hpp"

#include <cctype>
#include <vector>

#include "tracefs/dynamic_events.hpp"
#include "util/strings.hpp"

namespace tracekit::probe {

namespace {

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> w;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) w.emplace_back(s.substr(i, j - i));
    i = j;
  }
  return w;
}

std::string joined(const std::vector<std::string>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i) s += (s.empty() ? "" : " ") + w[i];
  return s;
}

Error bad(std::string_view text, const std::string& why, const std::string& hint) {
  return Error{0, "invalid probe definition '" + elide(text) + "': " + why, {}, hint};
}

// "p:" or "r:" and the rest; nullopt when neither.
std::optional<std::string_view> type_prefix(std::string_view text, bool& is_return) {
  if (text.size() < 2 || text[1] != ':' || (text[0] != 'p' && text[0] != 'r')) return std::nullopt;
  is_return = text[0] == 'r';
  return text.substr(2);
}

// "func+0x10" -> func, 0x10 (decimal or hex). False for a bad offset.
bool split_offset(const std::string& s, std::string& name, uint64_t& off) {
  auto plus = s.find('+');
  name = s.substr(0, plus);
  off = 0;
  if (plus == std::string::npos) return true;
  std::string_view o = std::string_view(s).substr(plus + 1);
  std::optional<uint64_t> v;
  if (o.size() > 2 && o[0] == '0' && (o[1] == 'x' || o[1] == 'X'))
    v = parse_hex<uint64_t>(o.substr(2));
  else
    v = parse_int<uint64_t>(o);
  if (!v) return false;
  off = *v;
  return true;
}

bool is_fetcharg(const std::string& w) { return w.find_first_of("=%$") != std::string::npos; }

}  // namespace

std::string Definition::event_name() const {
  if (!alias.empty()) return tracefs::probe_name(alias);
  if (!function.empty()) return tracefs::probe_name(function);
  std::string file = target.substr(target.rfind('/') + 1);
  file = file.substr(0, file.find('.'));
  char addr[32];
  std::snprintf(addr, sizeof addr, "0x%llx", static_cast<unsigned long long>(offset));
  return tracefs::probe_name(file + "_" + addr);
}

Result<Definition> parse_kprobe_definition(std::string_view text) {
  Definition d;
  auto rest = type_prefix(text, d.is_return);
  if (!rest) return bad(text, "it should start with p: or r:", "e.g. p:do_sys_open");
  auto w = words(*rest);
  if (w.empty() || (*rest)[0] == ' ') return bad(text, "no function", "e.g. p:do_sys_open");
  size_t args = 1;
  std::string where = w[0];
  if (w.size() > 1 && !is_fetcharg(w[1])) {
    d.alias = w[0];
    where = w[1];
    args = 2;
  }
  if (!split_offset(where, d.function, d.offset) || d.function.empty())
    return bad(text, "bad function '" + where + "'", "FUNCTION or FUNCTION+OFFSET");
  if (d.is_return && d.offset) return bad(text, "a return probe takes no offset", {});
  d.fetchargs = joined(w, args);
  return d;
}

Result<Definition> parse_uprobe_definition(std::string_view text) {
  Definition d;
  auto rest = type_prefix(text, d.is_return);
  if (!rest) return bad(text, "it should start with p: or r:", "e.g. p:bash:readline");
  auto w = words(*rest);
  if (w.empty()) return bad(text, "no probe", "e.g. p:bash:readline");
  size_t args = 1;
  std::string probe = w[0];
  if (probe.find(':') == std::string::npos) {
    if (w.size() < 2 || w[1].find(':') == std::string::npos)
      return bad(text, "no TARGET:SYMBOL", "e.g. p:bash:readline or p:myname /bin/bash:readline");
    d.alias = w[0];
    probe = w[1];
    args = 2;
  }
  auto colon = probe.rfind(':');
  d.target = probe.substr(0, colon);
  std::string sym = probe.substr(colon + 1);
  if (d.target.empty()) return bad(text, "no target before ':'", "a program, a library or a path");
  if (sym.empty()) return bad(text, "no symbol after ':'", "e.g. bash:readline or libc:0xbf130");
  if (sym.size() > 2 && sym[0] == '0' && (sym[1] == 'x' || sym[1] == 'X')) {
    auto a = parse_hex<uint64_t>(std::string_view(sym).substr(2));
    if (!a) return bad(text, "bad address '" + sym + "'", {});
    d.is_address = true;
    d.offset = *a;
  } else if (!split_offset(sym, d.function, d.offset) || d.function.empty()) {
    return bad(text, "bad symbol '" + sym + "'", "SYMBOL or SYMBOL+OFFSET");
  }
  if (d.is_return && d.offset && !d.is_address) return bad(text, "a return probe takes no offset", {});
  d.fetchargs = joined(w, args);
  return d;
}

Result<std::string> adapt_fetchargs(std::string_view in, bool has_argn, bool has_ustring) {
  static constexpr const char* kArgRegs[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  for (size_t i = 0; i < in.size();) {
    std::string_view rest = in.substr(i);
    if (!has_argn && rest.rfind("$arg", 0) == 0 && rest.size() > 4 &&
        std::isdigit(static_cast<unsigned char>(rest[4]))) {
      size_t end = 4;
      while (end < rest.size() && std::isdigit(static_cast<unsigned char>(rest[end]))) ++end;
      if (end == rest.size() || !word_char(rest[end])) {
        auto n = parse_int<int>(rest.substr(4, end - 4));
#if defined(__x86_64__)
        if (!n || *n < 1 || *n > 6)
          return Error{0, "cannot rewrite " + std::string(rest.substr(0, end)) +
                              " for this kernel (no $argN before Linux 4.20)",
                       {}, "arguments past the sixth are on the stack: fetch them by offset"};
        out += kArgRegs[*n - 1];
        i += end;
        continue;
#else
        (void)n;
        return Error{0, "this kernel has no $argN (Linux 4.20 brings it)", {},
                     "write the argument's register instead"};
#endif
      }
    }
    if (!has_ustring && rest.rfind(":ustring", 0) == 0 &&
        (rest.size() == 8 || !word_char(rest[8]))) {
      out += ":string";
      i += 8;
      continue;
    }
    if (!has_ustring && rest.rfind("+u", 0) == 0 && rest.size() > 2 &&
        (std::isdigit(static_cast<unsigned char>(rest[2])) || rest[2] == '-')) {
      out += '+';
      i += 2;
      continue;
    }
    out += in[i++];
  }
  return out;
}

}  // namespace tracekit::probe
