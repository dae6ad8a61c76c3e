#include "perf/syscall_regs.hpp"

#include <linux/perf_event.h>

#include "kernel/perf_open.hpp"
#include "symbols/kallsyms.hpp"
#include "tracefs/event_format.hpp"

namespace tracekit::perf {

bool has_syscall_fast_path() {
  // The entry code is core text: the scan stops at _etext.
  return symbols::kernel_has_text_symbol({"entry_SYSCALL_64_fastpath", "system_call_fastpath"},
                                         true);
}

Result<Fd> full_syscall_regs(const std::string& tracing_dir) {
  if (!has_syscall_fast_path()) return Fd();
  // One system call's event: its perf probe returns at once for every
  // other call. raw_syscalls:sys_enter's would build a record for every
  // call of the machine on 3.10 (which drops it only after, for want of an
  // event on that CPU): measured, 40% of a getppid loop's samples.
  auto fmt = tracefs::EventFormat::load(tracing_dir, "syscalls", "sys_enter_vhangup");
  if (!fmt) fmt = tracefs::EventFormat::load(tracing_dir, "raw_syscalls", "sys_enter");
  if (!fmt) return fmt.error();
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_TRACEPOINT;
  attr.config = static_cast<uint64_t>(fmt->id());
  attr.sample_period = 1;
  attr.disabled = 1;
  int fd = kernel::perf_event_open_cloexec(&attr, 0, -1, -1);
  if (fd < 0) return Error::from_errno("cannot open a perf event on syscall tracepoint " + fmt->name());
  return Fd(fd);
}

std::string syscall_regs_warning(const Error& e) {
  return "WARNING: " + e.str() +
         ": this kernel's system call fast path does not save the user frame pointer, so user "
         "stacks of tasks in a system call may be cut or wrong past their first frame\n";
}

}  // namespace tracekit::perf
