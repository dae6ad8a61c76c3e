// How this works: the kernel functions a spec can name come from
// available_filter_functions, the kernel's own list of the functions ftrace
// can hook, which leaves out notrace, init and blacklisted code by
// construction. Where that file cannot be read (some kernels answer EPERM,
// e.g. under lockdown), /proc/kallsyms is the fallback, and then what the
// kernel would have left out has to be left out here, the way bcc's
// get_kprobe_functions (src/python/bcc/__init__.py) filters kallsyms: a
// kprobe on init text or on a NOKPROBE symbol is refused, and a ".cold" part
// is no function entry. kallsyms lists more that is no function at all:
// __pfx_ padding labels, as many as the functions themselves on a kernel
// with call-depth tracking (57,848 of 122,086 text symbols on this 6.18).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "probe/sources.hpp"
#include "probe/spec.hpp"
#include "util/strings.hpp"

namespace tracekit::probe {

namespace {

void sort_unique(std::vector<std::string>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// A ".cold" or ".cold.N" suffix: the unlikely half of a function gcc split.
bool is_cold(std::string_view name) {
  size_t dot = name.find(".cold");
  if (dot == std::string_view::npos) return false;
  std::string_view rest = name.substr(dot + 5);
  if (rest.empty()) return true;
  return rest[0] == '.' && parse_int<unsigned>(rest.substr(1)).has_value();
}

struct KallsymsLine {
  uint64_t addr = 0;
  char type = 0;
  std::string_view name;
  std::string_view module;  // without brackets; "" for vmlinux
};

std::optional<KallsymsLine> parse_kallsyms_line(std::string_view line) {
  // "ffffffff816d5370 T vfs_read" or "ffffffffc0001000 t fn\t[mod]"
  size_t sp1 = line.find(' ');
  if (sp1 == std::string_view::npos || sp1 + 2 >= line.size() || line[sp1 + 2] != ' ')
    return std::nullopt;
  KallsymsLine l;
  auto addr = parse_hex<uint64_t>(line.substr(0, sp1));
  if (!addr) return std::nullopt;
  l.addr = *addr;
  l.type = line[sp1 + 1];
  std::string_view rest = line.substr(sp1 + 3);
  size_t tab = rest.find('\t');
  l.name = rest.substr(0, tab);
  if (tab != std::string_view::npos) {
    std::string_view mod = trim(rest.substr(tab + 1));
    if (mod.size() >= 2 && mod.front() == '[' && mod.back() == ']')
      l.module = mod.substr(1, mod.size() - 2);
  }
  if (l.name.empty()) return std::nullopt;
  return l;
}

}  // namespace

std::vector<std::string> parse_filter_functions(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view line : split(text, '\n')) {
    line = trim(line);
    std::string_view name = line.substr(0, line.find_first_of(" \t"));
    if (name.empty() || starts_with(name, "__ftrace_invalid_address__")) continue;
    out.emplace_back(name);
  }
  sort_unique(out);
  return out;
}

std::vector<std::string> parse_kallsyms_functions(std::string_view text) {
  std::vector<KallsymsLine> lines;
  // Ranges no kprobe attaches to, as [start, end) once both ends are seen.
  uint64_t init_start = 0, init_end = 0, irq_start = 0, irq_end = 0;
  for (std::string_view raw : split(text, '\n')) {
    auto l = parse_kallsyms_line(raw);
    if (!l) continue;
    // The markers themselves are labels, no functions.
    if (l->module.empty()) {
      if (l->name == "_sinittext") {
        init_start = l->addr;
        continue;
      }
      if (l->name == "_einittext") {
        init_end = l->addr;
        continue;
      }
      if (l->name == "__irqentry_text_start") {
        irq_start = l->addr;
        continue;
      }
      if (l->name == "__irqentry_text_end") {
        irq_end = l->addr;
        continue;
      }
    }
    if (l->type != 't' && l->type != 'T' && l->type != 'w' && l->type != 'W') continue;
    lines.push_back(*l);
  }
  auto in = [](uint64_t a, uint64_t start, uint64_t end) {
    return start != 0 && a >= start && a < end;
  };
  std::vector<std::string> out;
  out.reserve(lines.size());
  for (const KallsymsLine& l : lines) {
    if (l.module.empty() && (in(l.addr, init_start, init_end) || in(l.addr, irq_start, irq_end)))
      continue;
    if (l.module == "bpf" || starts_with(l.module, "__builtin__")) continue;
    // A leading '.' is an assembler's local label (".slowpath").
    if (l.name[0] == '.' || starts_with(l.name, "__pfx_") || starts_with(l.name, "__cfi_") ||
        starts_with(l.name, "_kbl_addr_") || starts_with(l.name, "__SCT__") || is_cold(l.name))
      continue;
    out.emplace_back(l.name);
  }
  sort_unique(out);
  return out;
}

Result<std::vector<std::string>> kernel_functions(const std::string& tracing_dir,
                                                  const std::string& kallsyms) {
  // Any failure (EPERM here, ENOENT without CONFIG_DYNAMIC_FTRACE) means:
  // use kallsyms.
  if (auto text = read_file(tracing_dir + "/available_filter_functions"))
    return parse_filter_functions(*text);
  auto text = read_file(kallsyms);
  if (!text) {
    Error e = text.error();
    e.message = "cannot list kernel functions";
    e.hint = "available_filter_functions is unreadable too; Root user? tracefs mounted?";
    return e;
  }
  return parse_kallsyms_functions(*text);
}

}  // namespace tracekit::probe
