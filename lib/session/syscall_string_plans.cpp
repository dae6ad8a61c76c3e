// The plans of lib/session/syscall_strings.hpp: for each way (kprobes,
// eprobes, uprobes), the entry-probe targets whose string fetch argument is
// named after the syscall's field, and whose event name starts "c<N>_" (N:
// the call's index). The run itself (create, attach, push) is in
// syscall_strings.cpp.
#include "session/syscall_strings.hpp"

#include <functional>

#include "syscalls/raw.hpp"
#include "util/strings.hpp"

namespace tracekit::session {

namespace {

std::string event_prefix(size_t call) { return "c" + std::to_string(call) + "_"; }

// "field=FETCH" for a string, "field0=FETCH0 field1=FETCH1 ..." for a
// vector, with fetch(element) giving each (element -1: the string).
std::string string_fetchargs(const SyscallString& c, const std::function<std::string(int)>& fetch) {
  if (c.argv <= 0) return c.field + "=" + fetch(-1);
  std::string s;
  for (int i = 0; i < c.argv; ++i)
    s += (i ? " " : "") + c.field + std::to_string(i) + "=" + fetch(i);
  return s;
}

}  // namespace

std::string_view path_name(StringPath p) {
  switch (p) {
    case StringPath::kKprobe:
      return "kprobes";
    case StringPath::kEprobe:
      return "eprobes";
    case StringPath::kUprobe:
      return "uprobes";
  }
  return "";
}

std::vector<LibcWrapper> libc_wrappers(std::string_view syscall) {
  // glibc's open() makes openat (since 2.26), musl's makes open: each
  // wrapper is listed under both, and a symbol at an address already
  // probed is skipped. The _2 forms are the fortified (_FORTIFY_SOURCE)
  // entries; the nocancel ones are what glibc calls inside itself.
  static const std::vector<LibcWrapper> kOpens = {
      {"open", 0},
      {"open64", 0},
      {"__open_2", 0},
      {"__open64_2", 0},
      {"__open_nocancel", 0},
      {"__open64_nocancel", 0},
      {"openat", 1},
      {"openat64", 1},
      {"__openat_2", 1},
      {"__openat64_2", 1},
      {"__openat_nocancel", 1},
      {"__openat64_nocancel", 1},
  };
  if (syscall == "open" || syscall == "openat") return kOpens;
  // Every exec function of glibc (execv, execvp, execl*, posix_spawn,
  // system) ends in execve's code; fexecve makes the execveat system call
  // itself (no path: only its vector is read).
  if (syscall == "execve") return {{"execve", 0, 1}};
  if (syscall == "execveat") return {{"execveat", 1, 2}, {"fexecve", -1, 1}};
  return {};
}

namespace {

// The string at pointer (element < 0), or at the element'th pointer of the
// array at pointer, read with a user-memory dereference when user.
std::string string_at(const std::string& pointer, int element, bool user, const char* type) {
  if (element < 0) return "+0(" + pointer + ")" + type;
  return "+0(+" + std::string(user ? "u" : "") + std::to_string(8 * element) + "(" + pointer +
         "))" + type;
}

}  // namespace

std::string kprobe_string_fetch(int arg, bool pt_regs, bool ustring, int element) {
  // struct pt_regs (x86_64): the offsets of di, si, dx, r10, r8, r9, the
  // syscall's argument registers; without the wrapper, sys_<name> is a C
  // function: di, si, dx, cx, r8, r9.
  static constexpr int kRegsOffset[] = {112, 104, 96, 56, 72, 64};
  static constexpr const char* kCRegs[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};
  if (arg < 0 || arg > 5) return {};
  const char* type = ustring ? ":ustring" : ":string";
  std::string pointer =
      pt_regs ? "+" + std::to_string(kRegsOffset[arg]) + "(%di)" : std::string(kCRegs[arg]);
  // The array is user memory: a kernel read of it fails on kernels that
  // check (the ones with ustring also have "+u").
  return string_at(pointer, element, ustring, type);
}

std::string uprobe_string_fetch(int arg, int element) {
  static constexpr const char* kCRegs[] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};
  if (arg < 0 || arg > 5) return {};
  return string_at(kCRegs[arg], element, false, ":string");
}

std::string eprobe_string_fetch(const std::string& field, bool ustring, int element) {
  return string_at("$" + field, element, ustring, ustring ? ":ustring" : ":string");
}

Result<StringPlan> plan_kprobes(const std::vector<SyscallString>& calls,
                                const std::vector<std::string>& kernel_functions, bool ustring,
                                bool comm) {
  StringPlan p;
  p.path = StringPath::kKprobe;
  std::vector<std::string> used;
  auto has = [&](const std::string& f) {
    return std::binary_search(kernel_functions.begin(), kernel_functions.end(), f);
  };
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    // 4.17+: __x64_sys_<name>(const struct pt_regs *). Before, the C
    // function sys_<name>, which available_filter_functions lists by its
    // alias SyS_<name> (the long-argument wrapper of
    // CONFIG_HAVE_SYSCALL_WRAPPERS, same address: 3.10 to 4.16, seen on
    // 3.10, 4.4 and 4.14), and sys_<name> where there is no wrapper.
    std::string fn = "__x64_sys_" + c.name;
    bool pt_regs = has(fn);
    if (!pt_regs) {
      fn = "SyS_" + c.name;
      if (!has(fn)) fn = "sys_" + c.name;
      if (!has(fn)) continue;
    }
    probe::Target t;
    t.kind = probe::Kind::kKernel;
    t.function = fn;
    t.event_name = event_prefix(i) + c.name;
    t.fetchargs = string_fetchargs(
        c, [&](int element) { return kprobe_string_fetch(c.arg, pt_regs, ustring, element); });
    if (comm) t.fetchargs += " comm=$comm";
    p.entries.push_back(std::move(t));
    used.push_back(fn);
  }
  if (p.entries.empty())
    return Error{ENOENT,
                 "no entry function of the system calls to kprobe",
                 {},
                 "looked for __x64_sys_NAME, SyS_NAME and sys_NAME in available_filter_functions"};
  p.how = "kprobes on " + join(used);
  return p;
}

StringPlan plan_eprobes(const std::vector<SyscallString>& calls, bool ustring, bool comm) {
  StringPlan p;
  p.path = StringPath::kEprobe;
  std::vector<std::string> used;
  for (size_t i = 0; i < calls.size(); ++i) {
    const auto& c = calls[i];
    probe::Target t;
    t.kind = probe::Kind::kEventProbe;
    t.system = "syscalls";
    t.event = "sys_enter_" + c.name;
    t.event_name = event_prefix(i) + c.name;
    t.fetchargs = string_fetchargs(
        c, [&](int element) { return eprobe_string_fetch(c.field, ustring, element); });
    if (comm) t.fetchargs += " comm=$comm";
    used.push_back("syscalls:" + t.event);
    p.entries.push_back(std::move(t));
  }
  p.how = "eprobes on " + join(used);
  return p;
}

Result<StringPlan> plan_uprobes(const std::vector<SyscallString>& calls, const std::string& libc,
                                const std::vector<probe::ElfFunction>& functions, bool comm,
                                UprobeEvents events) {
  const bool one = events == UprobeEvents::kOne;
  if (one) events = UprobeEvents::kPerCall;  // made one event below, where it can be
  StringPlan p;
  p.path = StringPath::kUprobe;
  std::vector<uint64_t> offsets;
  std::vector<std::string> used;
  std::vector<size_t> entry_calls;  // each entry's call
  for (size_t i = 0; i < calls.size(); ++i) {
    for (const auto& w : libc_wrappers(calls[i].name)) {
      const int arg = calls[i].argv > 0 ? w.argv : w.arg;
      if (arg < 0) continue;
      auto f = std::find_if(functions.begin(), functions.end(),
                            [&](const probe::ElfFunction& e) { return e.name == w.symbol; });
      if (f == functions.end() || f->ifunc) continue;
      if (std::find(offsets.begin(), offsets.end(), f->file_offset) != offsets.end()) continue;
      offsets.push_back(f->file_offset);
      probe::Target t;
      t.kind = probe::Kind::kUser;
      t.function = f->name;
      t.path = libc;
      t.offset = f->file_offset;
      // Probes sharing an event: disabling it waits for one kernel
      // synchronisation (uprobe_unregister_sync), not one per wrapper;
      // their arguments are named alike (the kernel's condition).
      t.event_name = event_prefix(i) + (events == UprobeEvents::kPerCall ? calls[i].name : f->name);
      t.shared_event = events != UprobeEvents::kEach;
      t.fetchargs = string_fetchargs(
          calls[i], [&](int element) { return uprobe_string_fetch(arg, element); });
      if (comm) t.fetchargs += " comm=$comm";
      p.entries.push_back(std::move(t));
      entry_calls.push_back(i);
      used.push_back(f->name);
    }
  }
  if (p.entries.empty())
    return Error{ENOENT,
                 "none of the C library's wrappers of the system calls is in " + libc,
                 {},
                 "a C library other than glibc or musl?"};
  // One event for all: where the probes are of several calls, whose
  // fields are named alike; the call's index is the field tk_call.
  auto alike = [&](size_t c) {
    return calls[c].field == calls[entry_calls[0]].field &&
           calls[c].argv == calls[entry_calls[0]].argv;
  };
  if (one && std::any_of(entry_calls.begin(), entry_calls.end(),
                         [&](size_t c) { return c != entry_calls[0]; }) &&
      std::all_of(entry_calls.begin(), entry_calls.end(), alike))
    for (size_t e = 0; e < p.entries.size(); ++e) {
      p.entries[e].event_name = event_prefix(0) + "calls";
      p.entries[e].fetchargs += " tk_call=\\" + std::to_string(entry_calls[e]) + ":u16";
    }
  p.how = "uprobes on " + libc + " (" + join(used) + ")";
  return p;
}

}  // namespace tracekit::session
