// Events as the kernel's trace file prints them (ftrace's default layout),
// for the tools that print events (tpoint, kprobe, uprobe):
//
//              cat-4242    [001] d..2.   512.123456: sys_enter_openat: dfd: ...
//
// the task's comm (right-aligned in 16) and pid, the CPU, the latency flags
// (irqs-off, need-resched, hardirq/softirq, preempt depth, migrate-disable),
// the timestamp in seconds with microseconds (rounded as the kernel rounds),
// the event's name and its print fmt output. A stack (-s) follows as the
// kernel prints its stacktrace entry: a context line of its own ending in
// "<stack trace>", then " => function" per frame, leaf first; a user stack
// as its userstacktrace entry: "<user stack trace>", then per frame
// " => function <00005583a0c1d265>" (the kernel's "path[+0x265] <addr>"
// with sym-userobj and sym-addr, our symbol in place of the path), or the
// kernel's default " =>  <00005583a0c1d265>" where no symbol resolves.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ftrace/reader.hpp"

struct tep_handle;
struct tep_format_field;
struct trace_seq;

namespace tracekit::symbols {
class KernelSymbols;
class UserSymbols;
}

namespace tracekit::output {

// The common fields every ftrace record starts with (common_type u16,
// common_flags u8, common_preempt_count u8, common_pid s32), at the offsets
// every kernel since 2.6 uses.
struct CommonFields {
  uint8_t flags = 0;
  uint8_t preempt_count = 0;
};
CommonFields common_fields(std::span<const uint8_t> record);

// The latency flags column as the kernel prints it: "d..2." with the
// migrate-disable column (kernels whose trace header has one), "d..2"
// without. Pure.
std::string latency_flags(CommonFields c, bool migrate_column);

// Appends "            comm-pid     [cpu] FLAGS  secs.usecs: " (the
// kernel's "%16s-%-7d [%03d] %s %5lu.%06lu: ") to out; pid_width 5 for the
// kernels that print "%-5d" (4.4 and others before the wider column). Pure.
void print_context(std::string& out, std::string_view comm, int pid, int cpu,
                   std::string_view flags, uint64_t ts_ns, int pid_width = 7);

// The pid column's width of a trace file header: the spaces between
// "TASK-PID" and "CPU#" plus 2 ("#           TASK-PID   CPU#" on 4.4: 5;
// "TASK-PID     CPU#": 7); 7 when the header has neither. Pure.
int pid_width_of_header(std::string_view header);

class EventText {
 public:
  // How the address of a dynamic probe's event is printed. The kernel
  // prints kprobes as "(vfs_read+0x0/0x1a0)" and uprobes as "(0x5583...)",
  // where their print fmt says "(%lx)".
  enum class ProbeAddresses { kAsFormatted, kKernel, kUser };

  // tep: the formats of every event to print (the reader's), not owned.
  // comm_of: the comm of a pid ("<...>" when unknown). ksyms: for stack
  // frames and kprobe addresses; may be null (addresses are printed).
  // migrate_column: see latency_flags. usyms: for user stack frames (in
  // the process of the user_stack record's tgid); may be null (addresses
  // are printed), not owned.
  // raw_syscalls_named: raw_syscalls:sys_enter/sys_exit records stand for
  // syscalls:* events (kernels without syscall tracepoints): their name
  // column is the syscall event's ("sys_enter_getppid", by the record's id),
  // the rest the raw record as the kernel prints it ("NR 110 (0, ...)").
  EventText(tep_handle* tep, std::function<std::string(int)> comm_of,
            const symbols::KernelSymbols* ksyms, bool migrate_column,
            ProbeAddresses probes = ProbeAddresses::kAsFormatted,
            symbols::UserSymbols* usyms = nullptr, bool raw_syscalls_named = false);
  EventText(EventText&&) noexcept;
  ~EventText();

  // Appends the event's line, and its stacks' entries when it has them, to
  // out. What an event type needs (its kind, its fields) is worked out at
  // its first event and kept: a system call's event costs no lookup by
  // name, no allocation and no format parsing per event.
  void print(std::string& out, const ftrace::Event& e);
  // Appends the event's name and print fmt output ("sched_switch:
  // prev_comm=..."), or what the kernel prints instead where it has a
  // function of its own (system calls: "sys_read(fd: 3, buf: 0x7ffd5c2b1e40,
  // count: 1)"; probe addresses, see ProbeAddresses).
  void info(std::string& out, const ftrace::Event& e);
  // The pid column's width (pid_width_of_header), 7 unless set.
  void set_pid_width(int width) { pid_width_ = width; }

 private:
  struct Format {
    // kUnknown: not in the handle. kSyscall*: the kernel's own text (see
    // info), from fields; kRawSyscall: fields holds the id; kFormatted: the
    // print fmt's output (also where a syscall's field cannot be read).
    enum class Kind { kUnknown, kSyscallEnter, kSyscallExit, kRawSyscall, kFormatted };
    Kind kind = Kind::kUnknown;
    std::string name;                       // kSyscall*: "sys_read"
    std::vector<tep_format_field*> fields;  // enter: the arguments; exit: ret; raw: id
    bool raw_exit = false;                  // kRawSyscall: raw_syscalls:sys_exit
    bool probe = false;                     // a dynamic probe's (__probe_ip, __probe_func)
  };
  struct SeqDeleter {
    void operator()(trace_seq* s) const;
  };
  std::string_view comm(int pid);
  const Format& format(int type);
  // Appends a syscall event's text; false (out unchanged) when a field lies
  // outside the record.
  bool syscall_text(std::string& out, const Format& f, const ftrace::Event& e);
  void print_kernel_stack(std::string& out, const ftrace::Event& e, std::string_view name);
  void print_user_stack(std::string& out, const ftrace::Event& e, std::string_view name);
  tep_handle* tep_;
  std::function<std::string(int)> comm_of_;
  const symbols::KernelSymbols* ksyms_;
  symbols::UserSymbols* usyms_;
  bool migrate_;
  int pid_width_ = 7;
  ProbeAddresses probes_;
  bool raw_syscalls_named_;
  std::unordered_map<int, std::string> comms_;
  int last_pid_ = 0;
  const std::string* last_comm_ = nullptr;  // comms_'s entry of last_pid_
  std::unordered_map<int, Format> formats_;
  int last_type_ = 0;
  const Format* last_format_ = nullptr;  // formats_'s entry of last_type_
  std::unique_ptr<trace_seq, SeqDeleter> seq_;  // reused for print fmt output
};

// Rewrites the "(ffffffff81234560)" or "(FUNC <- RET_IP)" that libtraceevent
// prints for a kprobe's or kretprobe's address (the print fmt's order),
// right after "name: ", as the kernel's trace file does: "(sym+0xoff/0xsize)",
// "(ret_sym+0xoff/0xsize <- func_sym)"; other text is returned as it is.
// Pure but for the lookups.
std::string symbolize_probe_ip(std::string text, const symbols::KernelSymbols& ksyms);
// The same for a uprobe's or uretprobe's: "(0x5583...)", "(0xRET_IP <- 0xFUNC)".
std::string user_probe_ip(std::string text);

}  // namespace tracekit::output
