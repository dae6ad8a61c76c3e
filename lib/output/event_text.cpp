#include "output/event_text.hpp"

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <cctype>
#include <cstdio>
#include <optional>

#include "symbols/kallsyms.hpp"
#include "symbols/user.hpp"
#include "syscalls/raw.hpp"
#include "util/strings.hpp"

namespace tracekit::output {

namespace {

// include/linux/trace_events.h, trace_flag_type.
constexpr uint8_t kIrqsOff = 0x01;
constexpr uint8_t kNeedReschedLazy = 0x02;  // IRQS_NOSUPPORT before 6.12
constexpr uint8_t kNeedResched = 0x04;
constexpr uint8_t kHardirq = 0x08;
constexpr uint8_t kSoftirq = 0x10;
constexpr uint8_t kPreemptResched = 0x20;
constexpr uint8_t kNmi = 0x40;
constexpr uint8_t kBhOff = 0x80;

}  // namespace

CommonFields common_fields(std::span<const uint8_t> record) {
  CommonFields c;
  if (record.size() >= 4) {
    c.flags = record[2];
    c.preempt_count = record[3];
  }
  return c;
}

std::string latency_flags(CommonFields c, bool migrate_column) {
  const uint8_t f = c.flags;
  char irqs = (f & kIrqsOff) && (f & kBhOff) ? 'D' : (f & kIrqsOff) ? 'd' : (f & kBhOff) ? 'b' : '.';
  char resched = '.';
  switch (f & (kNeedResched | kNeedReschedLazy | kPreemptResched)) {
    case kNeedResched | kNeedReschedLazy | kPreemptResched: resched = 'B'; break;
    case kNeedResched | kPreemptResched: resched = 'N'; break;
    case kNeedReschedLazy | kPreemptResched: resched = 'L'; break;
    case kNeedResched | kNeedReschedLazy: resched = 'b'; break;
    case kNeedResched: resched = 'n'; break;
    case kPreemptResched: resched = 'p'; break;
    case kNeedReschedLazy: resched = 'l'; break;
    default: break;
  }
  const bool nmi = f & kNmi, hard = f & kHardirq, soft = f & kSoftirq;
  char irq = nmi && hard ? 'Z' : nmi ? 'z' : hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
  static const char kHex[] = "0123456789abcdef";
  std::string s{irqs, resched, irq};
  s += (c.preempt_count & 0xf) ? kHex[c.preempt_count & 0xf] : '.';
  if (migrate_column) s += (c.preempt_count >> 4) ? kHex[c.preempt_count >> 4] : '.';
  return s;
}

void print_context(std::ostream& out, std::string_view comm, int pid, int cpu,
                   std::string_view flags, uint64_t ts_ns) {
  const uint64_t us = (ts_ns + 500) / 1000;  // the kernel's ns2usecs rounds
  char buf[128];
  std::snprintf(buf, sizeof buf, "%16.*s-%-7d [%03d] %.*s %5llu.%06llu: ",
                static_cast<int>(comm.size()), comm.data(), pid, cpu,
                static_cast<int>(flags.size()), flags.data(),
                static_cast<unsigned long long>(us / 1000000),
                static_cast<unsigned long long>(us % 1000000));
  out << buf;
}

EventText::EventText(tep_handle* tep, std::function<std::string(int)> comm_of,
                     const symbols::KernelSymbols* ksyms, bool migrate_column,
                     ProbeAddresses probes, symbols::UserSymbols* usyms,
                     bool raw_syscalls_named)
    : tep_(tep),
      comm_of_(std::move(comm_of)),
      ksyms_(ksyms),
      usyms_(usyms),
      migrate_(migrate_column),
      probes_(probes),
      raw_syscalls_named_(raw_syscalls_named) {}

std::string_view EventText::comm(int pid) {
  if (pid == 0) return "<idle>";
  auto it = comms_.find(pid);
  if (it != comms_.end()) return it->second;
  return comms_.emplace(pid, comm_of_ ? comm_of_(pid) : std::string(kUnknownComm)).first->second;
}

namespace {

// The kernel prints syscalls:sys_enter_* and sys_exit_* with a function of
// its own, not their print fmt, and without the event's name:
// "sys_read(fd: 3, buf: 0x55d0c0e0a0, count: 1)" (a value below 10 in
// decimal, the rest in hex) and "sys_read -> 0x1".
std::optional<std::string> syscall_text(tep_event* ev, const ftrace::Event& e) {
  if (!ev->system || std::string_view(ev->system) != "syscalls" || !ev->name) return std::nullopt;
  std::string_view name(ev->name);
  const bool enter = name.rfind("sys_enter_", 0) == 0, exit = name.rfind("sys_exit_", 0) == 0;
  if (!enter && !exit) return std::nullopt;
  std::string out = "sys_";
  out += name.substr(enter ? 10 : 9);
  auto value = [&](tep_format_field* f) -> std::optional<unsigned long long> {
    unsigned long long v = 0;
    if (static_cast<size_t>(f->offset) + static_cast<size_t>(f->size) > e.data.size()) return std::nullopt;
    if (tep_read_number_field(f, e.data.data(), &v) != 0) return std::nullopt;
    return v;
  };
  char buf[64];
  if (exit) {
    tep_format_field* ret = tep_find_field(ev, "ret");
    auto v = ret ? value(ret) : std::nullopt;
    if (!v) return std::nullopt;
    std::snprintf(buf, sizeof buf, " -> 0x%llx", *v);
    return out + buf;
  }
  out += '(';
  bool first = true;
  for (tep_format_field* f = ev->format.fields; f; f = f->next) {
    if (std::string_view(f->name) == "__syscall_nr") continue;
    auto v = value(f);
    if (!v) return std::nullopt;
    if (!first) out += ", ";
    first = false;
    if (*v < 10)
      std::snprintf(buf, sizeof buf, "%s: %llu", f->name, *v);
    else
      std::snprintf(buf, sizeof buf, "%s: 0x%llx", f->name, *v);
    out += buf;
  }
  return out + ")";
}

// The syscalls:* name a raw_syscalls record stands for ("sys_enter_getppid",
// by its id), or nullopt for any other event.
std::optional<std::string> raw_syscall_name(tep_event* ev, const ftrace::Event& e) {
  if (!ev->system || std::string_view(ev->system) != syscalls::kRawSystem || !ev->name)
    return std::nullopt;
  std::string_view name(ev->name);
  if (name != syscalls::raw_event(false) && name != syscalls::raw_event(true)) return std::nullopt;
  tep_format_field* id = tep_find_field(ev, "id");
  unsigned long long v = 0;
  if (!id || static_cast<size_t>(id->offset) + static_cast<size_t>(id->size) > e.data.size() ||
      tep_read_number_field(id, e.data.data(), &v) != 0)
    return std::nullopt;
  return syscalls::event_name(name == syscalls::raw_event(true), static_cast<long>(v));
}

}  // namespace

std::string EventText::info(const ftrace::Event& e) const {
  tep_event* ev = tep_find_event(tep_, e.type);
  if (!ev) return "type " + std::to_string(e.type) + ": (unknown event)";
  if (auto text = syscall_text(ev, e)) return *text;
  tep_record rec{};
  rec.ts = e.ts;
  rec.cpu = e.cpu;
  rec.data = const_cast<uint8_t*>(e.data.data());
  rec.size = static_cast<int>(e.data.size());
  trace_seq s;
  trace_seq_init(&s);
  std::optional<std::string> named;
  if (raw_syscalls_named_) named = raw_syscall_name(ev, e);
  if (named)  // (tep_print_event's arguments are TEP_PRINT_* codes, not text)
    tep_print_event(tep_, &s, &rec, "%s", TEP_PRINT_INFO);
  else
    tep_print_event(tep_, &s, &rec, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
  trace_seq_terminate(&s);
  std::string out = named ? *named + ": " : std::string();
  out.append(s.buffer, s.len);
  trace_seq_destroy(&s);
  const bool probe = tep_find_field(ev, "__probe_ip") || tep_find_field(ev, "__probe_func");
  if (probe && probes_ == ProbeAddresses::kKernel && ksyms_)
    return symbolize_probe_ip(std::move(out), *ksyms_);
  if (probe && probes_ == ProbeAddresses::kUser) return user_probe_ip(std::move(out));
  return out;
}

namespace {

// "name+0xoff/0xsize [module]" (with_offset) or "name [module]"; the
// address in hex when it resolves to nothing.
std::string kernel_sym(uint64_t addr, const symbols::KernelSymbols& ksyms, bool with_offset) {
  char buf[64];
  auto r = ksyms.lookup(addr);
  if (!r) {
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(addr));
    return buf;
  }
  std::string s(r->name);
  if (with_offset) {
    std::snprintf(buf, sizeof buf, "+0x%llx/0x%llx", static_cast<unsigned long long>(r->offset),
                  static_cast<unsigned long long>(r->size));
    s += buf;
  }
  if (!r->module.empty()) s += " [" + std::string(r->module) + "]";
  return s;
}

}  // namespace

namespace {

// Rewrites the "(HEX)" or "(FUNC <- RET_IP)" right after "name: " as the
// kernel prints them, "(show(ip))" or "(show(ret_ip) <- show(func))" (show's
// second argument: the address is the function's); text without them is
// returned as it is.
std::string rewrite_probe_ip(std::string text,
                             const std::function<std::string(uint64_t, bool)>& show) {
  auto open = text.find(": (");
  if (open == std::string::npos) return text;
  size_t p = open + 3;
  auto hex_at = [&](size_t at, size_t& end) -> std::optional<uint64_t> {
    end = at;
    while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end == at || end - at > 16) return std::nullopt;
    if (text.compare(at, 2, "0x") == 0) return std::nullopt;  // rewritten already
    return parse_hex<uint64_t>(std::string_view(text).substr(at, end - at));
  };
  size_t end = 0;
  auto first = hex_at(p, end);
  if (!first) return text;
  std::string rewritten = show(*first, false);
  if (text.compare(end, 4, " <- ") == 0) {
    // A return probe's print fmt says "(func <- ret_ip)"; the kernel prints
    // "(ret_ip <- func)": where it returned to, from which function.
    size_t end2 = 0;
    auto ret_ip = hex_at(end + 4, end2);
    if (!ret_ip) return text;
    rewritten = show(*ret_ip, false) + " <- " + show(*first, true);
    end = end2;
  }
  if (end >= text.size() || text[end] != ')') return text;
  return text.substr(0, p) + rewritten + text.substr(end);
}

}  // namespace

std::string symbolize_probe_ip(std::string text, const symbols::KernelSymbols& ksyms) {
  // The return side names the probed function, without an offset.
  return rewrite_probe_ip(std::move(text),
                          [&](uint64_t a, bool func) { return kernel_sym(a, ksyms, !func); });
}

std::string user_probe_ip(std::string text) {
  return rewrite_probe_ip(std::move(text), [](uint64_t a, bool) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(a));
    return std::string(buf);
  });
}

void EventText::print(std::ostream& out, const ftrace::Event& e) {
  const std::string_view name = comm(e.pid);
  print_context(out, name, e.pid, e.cpu, latency_flags(common_fields(e.data), migrate_), e.ts);
  out << info(e) << '\n';
  if (e.has_stack) print_kernel_stack(out, e, name);
  if (e.has_user_stack) print_user_stack(out, e, name);
}

void EventText::print_kernel_stack(std::ostream& out, const ftrace::Event& e,
                                   std::string_view name) {
  print_context(out, name, e.pid, e.cpu, latency_flags(common_fields(e.stack_record), migrate_),
                e.stack_ts);
  out << "<stack trace>\n";
  for (size_t i = 0; i < e.stack.size(); ++i) {
    out << " => ";
    auto r = ksyms_ ? ksyms_->lookup(e.stack[i], i > 0) : std::nullopt;
    if (r) {
      out << r->name;
      if (!r->module.empty()) out << " [" << r->module << "]";
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(e.stack[i]));
      out << buf;
    }
    out << '\n';
  }
}

void EventText::print_user_stack(std::ostream& out, const ftrace::Event& e,
                                 std::string_view name) {
  print_context(out, name, e.pid, e.cpu,
                latency_flags(common_fields(e.user_stack_record), migrate_), e.user_stack_ts);
  out << "<user stack trace>\n";
  for (size_t i = 0; i < e.user_stack.size(); ++i) {
    // The first entry is where the event fired, the rest return addresses.
    auto r = usyms_ && e.user_tgid > 0 ? usyms_->lookup(e.user_tgid, e.user_stack[i], i > 0)
                                       : std::nullopt;
    char addr[32];
    std::snprintf(addr, sizeof addr, "<%016llx>", static_cast<unsigned long long>(e.user_stack[i]));
    out << " => " << (r ? r->name : std::string_view()) << ' ' << addr << '\n';
  }
}

std::unordered_map<int, std::string> parse_saved_cmdlines(std::string_view text) {
  std::unordered_map<int, std::string> m;
  for (auto line : split(text, '\n')) {
    auto sp = line.find(' ');
    if (sp == std::string_view::npos) continue;
    auto pid = parse_int<int>(line.substr(0, sp));
    if (!pid) continue;
    m[*pid] = std::string(line.substr(sp + 1));
  }
  return m;
}

}  // namespace tracekit::output
