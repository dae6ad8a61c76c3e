#include "output/event_text.hpp"

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <optional>

#include "session/saved_comms.hpp"
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

namespace {

// v in decimal at p, right-aligned (or left-aligned) in width, padded with
// pad: printf's "%5llu", "%-7d", "%03d" without parsing a format per field.
// p must have room for max(width, 20) chars; returns the end.
template <typename T>
char* put_number(char* p, T v, size_t width, char pad = ' ', bool left = false) {
  char digits[24];
  const size_t n = static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, v).ptr - digits);
  const size_t fill = n < width ? width - n : 0;
  if (!left) p = std::fill_n(p, fill, pad);
  p = std::copy_n(digits, n, p);
  return left ? std::fill_n(p, fill, pad) : p;
}

template <typename T>
void append_number(std::string& out, T v) {
  char buf[24];
  out.append(buf, static_cast<size_t>(put_number(buf, v, 0) - buf));
}

void append_hex(std::string& out, unsigned long long v) {
  char buf[24];
  out.append(buf, static_cast<size_t>(std::to_chars(buf, buf + sizeof buf, v, 16).ptr - buf));
}

}  // namespace

int pid_width_of_header(std::string_view header) {
  const size_t at = header.find("TASK-PID");
  if (at == std::string_view::npos) return 7;
  size_t end = at + 8;
  while (end < header.size() && header[end] == ' ') ++end;
  if (header.compare(end, 4, "CPU#") != 0) return 7;
  return static_cast<int>(end - (at + 8)) + 2;
}

void print_context(std::string& out, std::string_view comm, int pid, int cpu,
                   std::string_view flags, uint64_t ts_ns, int pid_width) {
  const uint64_t us = (ts_ns + 500) / 1000;  // the kernel's ns2usecs rounds
  // "%16s-%-7d [%03d] %s %5lu.%06lu: ", in a few appends: this is most of
  // what a streaming tool does per event.
  if (comm.size() < 16) out.append(16 - comm.size(), ' ');
  out += comm;
  char buf[64];
  char* p = buf;
  *p++ = '-';
  p = put_number(p, pid, static_cast<size_t>(pid_width), ' ', /*left=*/true);
  p = std::copy_n(" [", 2, p);
  p = put_number(p, cpu, 3, '0');
  p = std::copy_n("] ", 2, p);
  out.append(buf, static_cast<size_t>(p - buf));  // (a pointer pair goes through replace())
  out += flags;
  p = buf;
  *p++ = ' ';
  p = put_number(p, us / 1000000, 5);
  *p++ = '.';
  p = put_number(p, us % 1000000, 6, '0');
  p = std::copy_n(": ", 2, p);
  out.append(buf, static_cast<size_t>(p - buf));
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

EventText::EventText(EventText&&) noexcept = default;
EventText::~EventText() = default;

void EventText::SeqDeleter::operator()(trace_seq* s) const {
  trace_seq_destroy(s);
  delete s;
}

std::string_view EventText::comm(int pid) {
  if (pid == 0) return "<idle>";
  if (last_comm_ && pid == last_pid_) return *last_comm_;
  auto it = comms_.find(pid);
  if (it == comms_.end())
    it = comms_
             .emplace(pid, comm_of_ ? printable(comm_of_(pid)) : std::string(session::kUnknownComm))
             .first;
  last_pid_ = pid;
  last_comm_ = &it->second;  // a node's: stays where it is as the table grows
  return *last_comm_;
}

// The kernel prints syscalls:sys_enter_* and sys_exit_* with a function of
// its own, not their print fmt, and without the event's name:
// "sys_read(fd: 3, buf: 0x55d0c0e0a0, count: 1)" (a value below 10 in
// decimal, the rest in hex) and "sys_read -> 0x1". raw_syscalls records
// (with raw_syscalls_named) print as the kernel prints them, under the
// syscalls:* event's name.
const EventText::Format& EventText::format(int type) {
  if (last_format_ && type == last_type_) return *last_format_;
  auto it = formats_.find(type);
  if (it == formats_.end()) {
    Format f;
    tep_event* ev = tep_find_event(tep_, type);
    if (ev) {
      f.kind = Format::Kind::kFormatted;
      f.probe = tep_find_field(ev, "__probe_ip") || tep_find_field(ev, "__probe_func");
      const std::string_view system = ev->system ? ev->system : "";
      const std::string_view name = ev->name ? ev->name : "";
      const bool enter = name.rfind("sys_enter_", 0) == 0, exit = name.rfind("sys_exit_", 0) == 0;
      if (system == "syscalls" && (enter || exit)) {
        f.name = "sys_" + std::string(name.substr(enter ? 10 : 9));
        if (exit) {
          if (tep_format_field* ret = tep_find_field(ev, "ret")) {
            f.kind = Format::Kind::kSyscallExit;
            f.fields.push_back(ret);
          }
        } else {
          f.kind = Format::Kind::kSyscallEnter;
          for (tep_format_field* field = ev->format.fields; field; field = field->next)
            if (std::string_view(field->name) != "__syscall_nr") f.fields.push_back(field);
        }
      } else if (raw_syscalls_named_ && system == syscalls::kRawSystem &&
                 (name == syscalls::raw_event(false) || name == syscalls::raw_event(true))) {
        if (tep_format_field* id = tep_find_field(ev, "id")) {
          f.kind = Format::Kind::kRawSyscall;
          f.raw_exit = name == syscalls::raw_event(true);
          f.fields.push_back(id);
        }
      }
    }
    it = formats_.emplace(type, std::move(f)).first;
  }
  last_type_ = type;
  last_format_ = &it->second;
  return *last_format_;
}

namespace {

// A field's value in the record; nullopt when the record is too short for it.
std::optional<unsigned long long> field_value(tep_format_field* f, const ftrace::Event& e) {
  unsigned long long v = 0;
  if (static_cast<size_t>(f->offset) + static_cast<size_t>(f->size) > e.data.size())
    return std::nullopt;
  if (tep_read_number_field(f, e.data.data(), &v) != 0) return std::nullopt;
  return v;
}

}  // namespace

bool EventText::syscall_text(std::string& out, const Format& f, const ftrace::Event& e) {
  const size_t start = out.size();
  out += f.name;
  if (f.kind == Format::Kind::kSyscallExit) {
    auto v = field_value(f.fields.front(), e);
    if (!v) return out.resize(start), false;
    out += " -> 0x";
    append_hex(out, *v);
    return true;
  }
  out += '(';
  bool first = true;
  for (tep_format_field* field : f.fields) {
    auto v = field_value(field, e);
    if (!v) return out.resize(start), false;
    if (!first) out += ", ";
    first = false;
    out += field->name;
    if (*v < 10) {
      out += ": ";
      append_number(out, *v);
    } else {
      out += ": 0x";
      append_hex(out, *v);
    }
  }
  out += ')';
  return true;
}

void EventText::info(std::string& out, const ftrace::Event& e) {
  const Format& f = format(e.type);
  if (f.kind == Format::Kind::kUnknown) {
    out += "type ";
    append_number(out, e.type);
    out += ": (unknown event)";
    return;
  }
  if ((f.kind == Format::Kind::kSyscallEnter || f.kind == Format::Kind::kSyscallExit) &&
      syscall_text(out, f, e))
    return;
  const size_t start = out.size();
  std::optional<unsigned long long> raw_id;
  if (f.kind == Format::Kind::kRawSyscall) raw_id = field_value(f.fields.front(), e);
  tep_record rec{};
  rec.ts = e.ts;
  rec.cpu = e.cpu;
  rec.data = const_cast<uint8_t*>(e.data.data());
  rec.size = static_cast<int>(e.data.size());
  if (!seq_ || seq_->state != TRACE_SEQ__GOOD) {
    seq_.reset(new trace_seq);
    trace_seq_init(seq_.get());
  }
  trace_seq* s = seq_.get();
  trace_seq_reset(s);
  if (raw_id) {  // (tep_print_event's arguments are TEP_PRINT_* codes, not text)
    out += syscalls::event_name(f.raw_exit, static_cast<long>(*raw_id));
    out += ": ";
    tep_print_event(tep_, s, &rec, "%s", TEP_PRINT_INFO);
  } else {
    tep_print_event(tep_, s, &rec, "%s: %s", TEP_PRINT_NAME, TEP_PRINT_INFO);
  }
  // The print fmt's output as the kernel's trace file shows it, but for
  // control characters: a string field (a file name, a comm, a probe's
  // fetched string) may hold a newline or ESC, which would forge a line or
  // reach the terminal. No print fmt of an event that can be enabled has a
  // control character of its own (only ftrace's internal events have tabs).
  append_printable(out, std::string_view(s->buffer, s->len));
  if (!f.probe || (probes_ == ProbeAddresses::kKernel && !ksyms_) ||
      probes_ == ProbeAddresses::kAsFormatted)
    return;
  std::string text = out.substr(start);
  out.resize(start);
  out += probes_ == ProbeAddresses::kKernel ? symbolize_probe_ip(std::move(text), *ksyms_)
                                            : user_probe_ip(std::move(text));
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

void EventText::print(std::string& out, const ftrace::Event& e) {
  const std::string_view name = comm(e.pid);
  print_context(out, name, e.pid, e.cpu, latency_flags(common_fields(e.data), migrate_), e.ts,
                pid_width_);
  info(out, e);
  out += '\n';
  if (e.has_stack) print_kernel_stack(out, e, name);
  if (e.has_user_stack) print_user_stack(out, e, name);
}

void EventText::print_kernel_stack(std::string& out, const ftrace::Event& e,
                                   std::string_view name) {
  print_context(out, name, e.pid, e.cpu, latency_flags(common_fields(e.stack_record), migrate_),
                e.stack_ts, pid_width_);
  out += "<stack trace>\n";
  for (size_t i = 0; i < e.stack.size(); ++i) {
    out += " => ";
    auto r = ksyms_ ? ksyms_->lookup(e.stack[i], i > 0) : std::nullopt;
    if (r) {
      append_printable(out, r->name);
      if (!r->module.empty()) {
        out += " [";
        out += r->module;
        out += ']';
      }
    } else {
      out += "0x";
      append_hex(out, e.stack[i]);
    }
    out += '\n';
  }
}

void EventText::print_user_stack(std::string& out, const ftrace::Event& e,
                                 std::string_view name) {
  print_context(out, name, e.pid, e.cpu,
                latency_flags(common_fields(e.user_stack_record), migrate_), e.user_stack_ts,
                pid_width_);
  out += "<user stack trace>\n";
  for (size_t i = 0; i < e.user_stack.size(); ++i) {
    // The first entry is where the event fired, the rest return addresses.
    auto r = usyms_ && e.user_tgid > 0 ? usyms_->lookup(e.user_tgid, e.user_stack[i], i > 0)
                                       : std::nullopt;
    char addr[32];
    std::snprintf(addr, sizeof addr, "<%016llx>", static_cast<unsigned long long>(e.user_stack[i]));
    out += " => ";
    if (r) append_printable(out, r->name);  // from the process's ELF files: anyone's
    out += ' ';
    out += addr;
    out += '\n';
  }
}

}  // namespace tracekit::output
