// How this works: a spec's pattern is compiled once (Matcher) and run over
// the list of what exists for its kind: kernel functions
// (kernel_functions), the event directories under <tracing>/events, or the
// function symbols of the resolved ELF file. The limit is checked on what
// would be attached, after duplicates are gone.
//
// User functions have aliases: malloc and __libc_malloc are one address in
// libc, and the kernel takes one uprobe per (file, offset), so each offset
// becomes one target. Among the matching names at an offset the one our
// symbolizer (symbols/function_table.cpp) would print wins: global over
// weak over local, then fewer leading underscores. Distinct offsets under
// one name (memcpy@GLIBC_2.2.5 and memcpy@@GLIBC_2.14) stay distinct
// targets, as in bcc's attach_uprobe(sym_re=...), which probes every
// distinct address.
//
// Regexes (-r, funccount's and stackcount's, both bcc's) match as bcc's do:
// from the start of the name (Python's re.match in BPF.get_kprobe_functions,
// get_user_functions_and_addresses and get_tracepoints), not anywhere in
// it. bcc matches a tracepoint's regex against "category:event" as a whole;
// here the category and event patterns are apart, so the category's must
// match all of the category (bcc's must reach the ':') and the event's its
// start.
//
// Every loop over names asks opts.stopped() (Ctrl-C by default) before each
// name: a name costs microseconds, so a stop request ends the expansion at
// once, whatever the pattern.
#include <elf.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "cli/signals.hpp"
#include "kernel/features.hpp"
#include "probe/match.hpp"
#include "probe/spec.hpp"
#include "symbols/symbol.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::probe {

namespace {

constexpr Anchor name_anchor = Anchor::kStart;
constexpr Anchor category_anchor = Anchor::kWhole;

// Asked between names: true when the expansion must end (Ctrl-C).
class StopCheck {
 public:
  explicit StopCheck(const ExpandOptions& opts) : fn_(opts.stopped) {}
  bool operator()() const { return fn_ ? fn_() : cli::stop_requested(); }

 private:
  std::function<bool()> fn_;
};

Error interrupted(const Spec& spec) {
  return Error{EINTR, "interrupted while expanding \"" + elide(spec.text) + "\"", {}, {}};
}

Result<std::string> tracing_dir_of(const ExpandOptions& opts) {
  if (!opts.tracing_dir.empty()) return opts.tracing_dir;
  return tracefs::tracing_dir();
}

Result<std::vector<Target>> kernel_targets(const Spec& spec, const Matcher& match,
                                           const ExpandOptions& opts) {
  auto dir = tracing_dir_of(opts);
  if (!dir) return dir.error();
  auto fns = kernel_functions(*dir);
  if (!fns) return fns.error();
  StopCheck stopped(opts);
  std::vector<Target> out;
  for (const std::string& fn : *fns) {
    if (stopped()) return interrupted(spec);
    if (!match(fn)) continue;
    Target t;
    t.kind = spec.kind;
    t.function = fn;
    out.push_back(std::move(t));
  }
  return out;  // kernel_functions is sorted and unique already
}

// Whether tracing_dir's kernel has syscalls:* tracepoints (not forced off).
bool has_syscall_tracepoints(const ExpandOptions& opts, const std::string& tracing_dir) {
  if (opts.syscall_tracepoints) return *opts.syscall_tracepoints;
  return kernel::has_syscall_tracepoints(tracing_dir);
}

bool is_glob(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// syscalls:* without syscall tracepoints: the syscalls libseccomp knows,
// each a target that raw_syscalls traces (wildcards match libseccomp's
// names, syscall(2)'s: sys_enter_stat, not the kernel's sys_enter_newstat).
// A name without wildcards that libseccomp does not know is an error, not
// zero matches: the event may well exist, only its number is unknown.
Result<std::vector<Target>> raw_syscall_targets(const Spec& spec, const Matcher& match,
                                                const ExpandOptions& opts) {
  std::vector<Target> out;
  auto target = [&](const std::string& event, int nr) {
    Target t;
    t.kind = Kind::kTracepoint;
    t.system = std::string(syscalls::kSystem);
    t.event = event;
    t.syscall_nr = nr;
    out.push_back(std::move(t));
  };
  // An exact name: the kernel's own names too (sys_enter_newuname), which
  // the list of libseccomp's names below does not hold.
  if (!opts.regex && !is_glob(spec.pattern)) {
    auto raw = syscalls::to_raw(spec.pattern);
    if (raw) {
      target(spec.pattern, raw->nr);
      return out;
    }
    if (spec.category != syscalls::kSystem) return out;
    Error e = raw.error();
    e.message = "cannot trace " + spec.category + ":" + spec.pattern + ": " + e.message;
    return e;
  }
  StopCheck stopped(opts);
  for (const std::string& event : syscalls::event_names()) {
    if (stopped()) return interrupted(spec);
    if (!match(event)) continue;
    auto raw = syscalls::to_raw(event);
    if (raw) target(event, raw->nr);
  }
  return out;
}

Result<std::vector<Target>> tracepoint_targets(const Spec& spec, const Matcher& match,
                                               const ExpandOptions& opts) {
  auto category = Matcher::make(spec.category, opts.regex, category_anchor);
  if (!category) return category.error();
  auto dir = tracing_dir_of(opts);
  if (!dir) return dir.error();
  // Kernels without syscall tracepoints (or with them forced off, when
  // events/syscalls is there but must not be used).
  const bool raw_syscalls =
      (*category)(std::string(syscalls::kSystem)) && !has_syscall_tracepoints(opts, *dir);
  std::vector<Target> out;
  if (raw_syscalls) {
    auto raw = raw_syscall_targets(spec, match, opts);
    if (!raw) return raw.error();
    out = std::move(*raw);
  }
  namespace fs = std::filesystem;
  fs::path events = fs::path(*dir) / "events";
  std::error_code ec;
  fs::directory_iterator systems(events, ec);
  if (ec) {
    Error e = tracefs::access_error(events.string(), ec.value());
    e.message = "cannot list tracepoints";  // with access_error's errno and hint
    return e;
  }
  StopCheck stopped(opts);
  for (const fs::directory_entry& sys : systems) {
    if (stopped()) return interrupted(spec);
    std::string system = sys.path().filename().string();
    // events/ also holds files: enable, header_page, header_event.
    if (!sys.is_directory(ec) || !(*category)(system)) continue;
    if (raw_syscalls && system == syscalls::kSystem) continue;
    for (const fs::directory_entry& ev : fs::directory_iterator(sys.path(), ec)) {
      if (stopped()) return interrupted(spec);
      std::string event = ev.path().filename().string();
      // A directory without "id" is no event (a system's own files are
      // enable and filter; directories are events).
      if (!ev.is_directory(ec) || !match(event) || !fs::exists(ev.path() / "id", ec)) continue;
      Target t;
      t.kind = Kind::kTracepoint;
      t.system = system;
      t.event = event;
      out.push_back(std::move(t));
    }
  }
  std::sort(out.begin(), out.end(), [](const Target& a, const Target& b) {
    return std::tie(a.system, a.event) < std::tie(b.system, b.event);
  });
  return out;
}

// Lower is preferred among aliases at one offset.
std::tuple<int, const std::string&> alias_rank(const ElfFunction& f) {
  return {symbols::alias_rank(symbols::elf_binding_preference(f.binding), f.name), f.name};
}

// Zero matches in a file without .symtab: the name may well be there, and
// the user needs to hear that it cannot be seen rather than that it does
// not exist.
Error stripped_error(const Spec& spec, const std::string& path, const ElfFunctions& syms) {
  return Error{0,
               "0 functions matched by \"" + elide(spec.text) + "\": " + stripped_reason(path, syms),
               {}, "probe an unstripped build of it"};
}

Result<std::vector<Target>> user_targets(const Spec& spec, const Matcher& match,
                                         const ExpandOptions& opts) {
  auto path = resolve_library(spec.library);
  if (!path) return path.error();
  auto syms = elf_symbols(*path);
  if (!syms) return syms.error();
  StopCheck stopped(opts);
  std::vector<ElfFunction> hits;
  for (ElfFunction& f : syms->functions) {
    if (stopped()) return interrupted(spec);
    if (match(f.name)) hits.push_back(std::move(f));
  }
  if (hits.empty() && !syms->has_symtab) return stripped_error(spec, *path, *syms);
  std::sort(hits.begin(), hits.end(), [](const ElfFunction& a, const ElfFunction& b) {
    if (a.file_offset != b.file_offset) return a.file_offset < b.file_offset;
    return alias_rank(a) < alias_rank(b);
  });
  hits.erase(std::unique(hits.begin(), hits.end(),
                         [](const ElfFunction& a, const ElfFunction& b) {
                           return a.file_offset == b.file_offset;
                         }),
             hits.end());
  std::vector<Target> out;
  for (const ElfFunction& f : hits) {
    Target t;
    t.kind = spec.kind;
    t.function = f.name;
    t.path = *path;
    t.offset = f.file_offset;
    t.at_entry = spec.kind == Kind::kUser;
    if (t.at_entry) t.frame_entry = entry_sets_frame(t.path, t.offset);
    out.push_back(std::move(t));
  }
  std::sort(out.begin(), out.end(), [](const Target& a, const Target& b) {
    return std::tie(a.function, a.offset) < std::tie(b.function, b.offset);
  });
  return out;
}

}  // namespace

std::string stripped_reason(const std::string& path, const ElfFunctions& syms) {
  return path + (syms.has_dynsym
                     ? " has no symbol table (.symtab): it is stripped, so only its dynamic "
                       "symbols (.dynsym) could be matched"
                     : " has no symbol table (neither .symtab nor .dynsym): it is stripped, so "
                       "no function can be found by name");
}

Error no_match_error(const Spec& spec) {
  const char* what = spec.kind == Kind::kTracepoint ? "tracepoints" : "functions";
  return Error{0,
               "0 " + std::string(what) + " matched by \"" + elide(spec.text) + "\". Exiting.",
               {},
               {},
               ErrorKind::kNoMatch};
}

Result<void> check_patterns(const Spec& spec, bool regex) {
  for (const std::string* p : {&spec.pattern, &spec.category}) {
    auto m = Matcher::make(*p, regex, p == &spec.pattern ? name_anchor : category_anchor);
    if (!m) return m.error();
  }
  return {};
}

size_t syscalls_through_raw(std::vector<Target>& targets) {
  for (const auto& t : targets)
    if (t.kind != Kind::kTracepoint || t.system != syscalls::kSystem) return 0;
  size_t n = 0;
  for (auto& t : targets) {
    if (t.syscall_nr >= 0) continue;
    auto raw = syscalls::to_raw(t.event);
    if (!raw) continue;
    t.syscall_nr = raw->nr;
    ++n;
  }
  return n;
}

Result<std::vector<Target>> expand(const Spec& spec, const ExpandOptions& opts) {
  if (spec.kind == Kind::kUsdt) return Error{0, "USDT probes are not supported yet", spec.text, {}};
  auto match = Matcher::make(spec.pattern, opts.regex, name_anchor);
  if (!match) return match.error();
  Result<std::vector<Target>> out = Error{};
  switch (spec.kind) {
    case Kind::kKernel:
    case Kind::kKernelReturn:
      out = kernel_targets(spec, *match, opts);
      break;
    case Kind::kTracepoint:
      out = tracepoint_targets(spec, *match, opts);
      break;
    case Kind::kUser:
    case Kind::kUserReturn:
      out = user_targets(spec, *match, opts);
      break;
    case Kind::kUsdt:
    case Kind::kEventProbe:
      break;
  }
  if (out && out->size() > opts.max_probes) {
    const std::string& name = spec.text.empty() ? spec.pattern : spec.text;
    return Error{0,
                 std::to_string(out->size()) + " probes match \"" + name +
                     "\": more than the limit of " + std::to_string(opts.max_probes),
                 {},
                 "narrow the pattern"};
  }
  return out;
}

}  // namespace tracekit::probe
