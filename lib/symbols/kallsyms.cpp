// How this works: /proc/kallsyms lists every kernel symbol, vmlinux first,
// then modules, BPF programs and trampolines, each "ADDR TYPE NAME [MOD]".
// We keep only text symbols, store the names once in a NUL-separated string
// and sort a compact table by address; lookup() is a binary search for the
// greatest start <= addr. kallsyms has no sizes, so a symbol implicitly ends
// where the next one starts. The last symbol of vmlinux' core text and of its
// init text would otherwise swallow everything up to the modules (rodata,
// data, unmapped holes), so the "_etext" and "_einittext" markers are kept
// aside as ends of vmlinux text. Module text has no such marker in kallsyms
// (the sizes are in /proc/modules, which a parser must not read), so a
// module's last symbol is accepted up to the next symbol.
#include "symbols/kallsyms.hpp"

#include <fstream>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <iterator>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "util/strings.hpp"

namespace tracekit::symbols {

namespace {

// Among symbols sharing an address, which name to show: perf's rules in
// short. A weak symbol is a default someone may override, so a strong one
// wins, then a global one over a file-local one, then the name with fewer
// leading underscores (internal aliases like "__pi__text" lose).
int rank(char type, std::string_view name) {
  return alias_rank(type == 'w' || type == 'W' ? 2 : type == 't' ? 1 : 0, name);
}

bool is_text_end(std::string_view name) { return name == "_etext" || name == "_einittext"; }

}  // namespace

KernelSymbols KernelSymbols::parse(std::istream& in) {
  std::string text(std::istreambuf_iterator<char>(in), {});
  return parse(std::string_view(text));
}

KernelSymbols KernelSymbols::parse(std::string_view text) {
  KernelSymbols ks;
  ks.table_ = std::make_shared<const Table>(parse_table(text));
  return ks;
}

KernelSymbols::Table KernelSymbols::parse_table(std::string_view text) {
  struct Parsed {
    uint64_t addr;
    int rank;
    uint32_t name, module;
  };
  Table table;
  std::vector<Parsed> parsed;
  std::unordered_map<std::string, uint32_t> modules;
  table.names.push_back('\0');  // offset 0 is "", the vmlinux module name

  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    std::string_view s = line;
    size_t sp1 = s.find(' ');
    if (sp1 == std::string_view::npos || sp1 + 3 > s.size() || s[sp1 + 2] != ' ') continue;
    char type = s[sp1 + 1];
    if (type != 't' && type != 'T' && type != 'w' && type != 'W') {
      // vmlinux's data and bss too: where its image ends ('A'bsolute
      // symbols are offsets, not addresses).
      if (type != 'A' && type != 'a' && line.find('[') == std::string_view::npos)
        if (auto a = parse_hex<uint64_t>(s.substr(0, sp1)); a && *a > table.image_end)
          table.image_end = *a;
      continue;
    }
    auto addr = parse_hex<uint64_t>(s.substr(0, sp1));
    // Zero is what an unprivileged reader sees for every symbol.
    if (!addr || *addr == 0) continue;
    std::string_view rest = s.substr(sp1 + 3);
    size_t end = rest.find_first_of(" \t");
    std::string_view name = rest.substr(0, end);
    // A NUL would cut the name short in names_ (an empty name, found by
    // fuzzing): no kernel writes one, so the line is garbage.
    if (name.empty() || line.find('\0') != std::string_view::npos) continue;
    std::string_view mod;
    if (end != std::string_view::npos) {
      mod = trim(rest.substr(end));
      if (mod.size() >= 2 && mod.front() == '[' && mod.back() == ']')
        mod = mod.substr(1, mod.size() - 2);
      else
        mod = {};
    }
    if (mod.empty() && is_text_end(name)) {
      table.text_ends.push_back(*addr);
      continue;
    }
    uint32_t mod_off = 0;
    if (!mod.empty()) {
      auto [it, fresh] = modules.try_emplace(std::string(mod), 0);
      if (fresh) {
        it->second = static_cast<uint32_t>(table.names.size());
        table.names.append(mod).push_back('\0');
      }
      mod_off = it->second;
    }
    auto name_off = static_cast<uint32_t>(table.names.size());
    table.names.append(name).push_back('\0');
    parsed.push_back({*addr, rank(type, name), name_off, mod_off});
  }

  // Stable, so that equal ranks keep file order and parsing is deterministic.
  std::stable_sort(parsed.begin(), parsed.end(), [](const Parsed& a, const Parsed& b) {
    return a.addr != b.addr ? a.addr < b.addr : a.rank < b.rank;
  });
  table.syms.reserve(parsed.size());
  for (const Parsed& p : parsed) {
    if (!table.syms.empty() && table.syms.back().addr == p.addr) continue;
    table.syms.push_back({p.addr, p.name, p.module});
  }
  std::sort(table.text_ends.begin(), table.text_ends.end());
  // Data that ends below vmlinux's last text says nothing of where it ends.
  for (auto it = table.syms.rbegin(); it != table.syms.rend(); ++it)
    if (it->module == 0) {
      if (table.image_end <= it->addr) table.image_end = 0;
      break;
    }
  return table;
}

namespace {

constexpr std::string_view kKallsyms = "/proc/kallsyms";

// The first lines of path (up to 64 KiB, whole lines only); nullopt when it
// cannot be opened or read.
std::optional<std::string> head_of(const std::string& path, int* err) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *err = errno;
    return std::nullopt;
  }
  std::string text(64 * 1024, '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *err = errno;
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  text.resize(got);
  if (auto nl = text.rfind('\n'); nl != std::string::npos) text.resize(nl + 1);
  return text;
}

}  // namespace

Result<KernelSymbols> KernelSymbols::load(const std::string& path) {
  if (path == kKallsyms) {
    // One background load per process, shared by every caller.
    static std::mutex mu;
    static std::shared_future<std::shared_ptr<const Table>> shared;
    std::lock_guard lock(mu);
    if (!shared.valid()) {
      int err = 0;
      auto head = head_of(path, &err);
      if (!head) return Error{err, "cannot read kernel symbols", path, {}};
      // kptr_restrict shows every address as 0: its first lines tell.
      if (parse_table(*head).syms.empty())
        return Error{0, "no usable kernel symbol addresses in", path,
                     "run as root, or set sysctl kernel.kptr_restrict=0"};
      // The thread starts with every signal blocked (a new thread inherits
      // its creator's mask): a Ctrl-C delivered to it would set the stop
      // flag without interrupting the main thread's poll(), so the tool
      // would not stop until that poll timed out.
      sigset_t all, saved;
      sigfillset(&all);
      pthread_sigmask(SIG_SETMASK, &all, &saved);
      shared = std::async(std::launch::async, [p = path] {
                 auto text = read_file(p);
                 return std::make_shared<const Table>(
                     text ? parse_table(std::string_view(*text)) : Table{});
               }).share();
      pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    }
    KernelSymbols ks;
    ks.pending_ = shared;
    return ks;
  }
  auto text = read_file(path);
  if (!text) return Error{text.error().err, "cannot read kernel symbols", path, {}};
  KernelSymbols ks = parse(std::string_view(*text));
  if (ks.size() == 0)
    return Error{0, "no usable kernel symbol addresses in", path,
                 "run as root, or set sysctl kernel.kptr_restrict=0"};
  return ks;
}

bool KernelSymbols::loaded() const {
  return table_ || !pending_.valid() ||
         pending_.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

void KernelSymbols::resolve() const {
  static const auto empty = std::make_shared<const Table>();
  table_ = pending_.valid() ? pending_.get() : empty;
}

std::optional<Resolved> KernelSymbols::lookup(uint64_t addr, bool return_address) const {
  // A return address points after the call; the call itself may have been
  // the last instruction of the function (a noreturn call), so the caller is
  // found at addr-1.
  if (return_address && addr == 0) return std::nullopt;
  uint64_t a = return_address ? addr - 1 : addr;
  const Table& t = table();
  const auto& syms = t.syms;
  const auto& names = t.names;
  const auto& text_ends = t.text_ends;
  auto it = std::upper_bound(syms.begin(), syms.end(), a,
                             [](uint64_t v, const Sym& s) { return v < s.addr; });
  if (it == syms.begin()) return std::nullopt;
  const Sym& sym = *std::prev(it);
  if (sym.module == 0) {
    auto end = std::upper_bound(text_ends.begin(), text_ends.end(), sym.addr);
    if (end != text_ends.end() && a >= *end) return std::nullopt;
    // Past vmlinux's image (a symbol of .exit.text or the like, after the
    // last text end marker, once stood for every address above it: an
    // ftrace trampoline in module space printed as exit_amd_microcode).
    if (t.image_end && a > t.image_end) return std::nullopt;
  }
  return Resolved{std::string_view(names.data() + sym.name), addr - sym.addr,
                  std::string_view(names.data() + sym.module),
                  it != syms.end() ? it->addr - sym.addr : 0};
}

}  // namespace tracekit::symbols

namespace tracekit::symbols {

std::optional<KernelSymbols::Range> KernelSymbols::text_range(std::string_view module) const {
  const Table& t = table();
  const auto& syms = t.syms;
  const auto& names = t.names;
  const auto& text_ends = t.text_ends;
  std::optional<size_t> first, last;
  for (size_t i = 0; i < syms.size(); ++i) {
    if (std::string_view(names.data() + syms[i].module) != module) continue;
    if (!first) first = i;
    last = i;
  }
  if (!first) return std::nullopt;
  Range r{syms[*first].addr, *last + 1 < syms.size() ? syms[*last + 1].addr : UINT64_MAX};
  // vmlinux' last symbol ends at the text end marker above it, as in lookup().
  if (module.empty()) {
    auto end = std::upper_bound(text_ends.begin(), text_ends.end(), syms[*last].addr);
    if (end != text_ends.end()) r.end = *end;
  }
  return r;
}

bool kernel_has_text_symbol(std::initializer_list<std::string_view> names, bool core_text_only,
                            const std::string& path) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    // "ADDRESS TYPE NAME[\t[MODULE]]"
    auto sp = line.find(' ');
    if (sp == std::string::npos || sp + 3 > line.size()) continue;
    const char type = line[sp + 1];
    if (type != 't' && type != 'T') continue;
    std::string_view sym(line);
    sym.remove_prefix(sp + 3);
    if (auto tab = sym.find('\t'); tab != std::string_view::npos) sym = sym.substr(0, tab);
    for (auto name : names)
      if (sym == name) return true;
    if (core_text_only && sym == "_etext") return false;
  }
  return false;
}

}  // namespace tracekit::symbols
