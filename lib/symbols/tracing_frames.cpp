#include "symbols/tracing_frames.hpp"

#include "symbols/kallsyms.hpp"

namespace tracekit::symbols {

namespace {

constexpr size_t kCacheSlots = 1024;  // a power of two

// Names (prefixes) of the frames the tracing machinery puts on top of a
// trigger's or handler's stack: seen on this kernel (6.18) for tracepoints
// and syscalls, read from the kernel source for the paths it lacks (kprobes,
// function tracer: the VM tier's 6.1). syscall_trace_enter and
// syscall_exit_work, which call the syscall tracepoints, are kept: they are
// where the tracepoint sits, as __schedule is for sched_switch.
constexpr std::string_view kTracingPrefixes[] = {
    // tracepoints (perf_trace_*: perf's twin) and the syscall tracepoints
    "trace_event_raw_event_",
    "__traceiter_",
    "perf_trace_",
    "ftrace_",  // also ftrace_syscall_enter/exit, ftrace_regs_caller, ftrace_trampoline
    "__ftrace_",
    "perf_syscall_",
    // the trigger and the stack saving, should the kernel not skip them
    "trace_event_buffer_",
    "event_triggers_",
    "event_trigger_",
    "stacktrace_trigger",
    "stacktrace_count_trigger",
    "__trace_stack",
    "trace_buffer_unlock_commit",
    "stack_trace_save",
    "arch_stack_walk",
    // function tracer (func_stack_trace)
    "function_trace_call",
    "function_stack_trace_call",
    // kprobes: dispatch, int3/ftrace/optprobe entry, kretprobe/rethook/fprobe
    "kprobe_",  // also the insn slots: kprobe_insn_page, kprobe_optinsn_page
    "__kprobe_",
    "kretprobe_",
    "__kretprobe_",
    "aggr_pre_handler",
    "aggr_post_handler",
    "opt_pre_handler",
    "optimized_callback",
    "optprobe_template_",
    "trampoline_handler",
    "rethook_",
    "arch_rethook_",
    "fprobe_",
    "__fprobe_",
    "do_int3",
    "exc_int3",
    "asm_exc_int3",
    // uprobes
    "uprobe_dispatcher",
    "uretprobe_dispatcher",
    "__uprobe_trace_func",
    "uprobe_trace_func",
    "__uprobe_perf_func",
    "uprobe_perf_func",
    "handler_chain",
};

}  // namespace

bool is_tracing_frame(std::string_view symbol) {
  for (std::string_view p : kTracingPrefixes)
    if (symbol.substr(0, p.size()) == p) return true;
  return false;
}

TracingFrames::TracingFrames(const KernelSymbols* symbols) : symbols_(symbols) {
  if (symbols_) cache_.resize(kCacheSlots);
}

bool TracingFrames::tracing(uint64_t addr) {
  Slot& slot = cache_[(addr >> 4) & (kCacheSlots - 1)];
  if (slot.addr == addr) return slot.tracing;
  // Every stack frame but the leaf is a return address; the leaf here is a
  // return address too (the kernel saves the caller chain of the stack
  // saving code, then skips its own frames), so look up addr - 1.
  auto r = symbols_->lookup(addr, true);
  slot.addr = addr;
  // No symbol, in module space: a trampoline ftrace or kprobes allocated
  // for the probe (kallsyms names it "ftrace_trampoline" only while it
  // lives, and a buffered run reads its stacks after).
  slot.tracing = r ? is_tracing_frame(r->name) : symbols_->past_image(addr - 1);
  return slot.tracing;
}

size_t TracingFrames::leading(std::span<const uint64_t> stack) {
  if (!symbols_) return 0;
  size_t n = 0;
  while (n < stack.size() && tracing(stack[n])) ++n;
  return n == stack.size() ? 0 : n;
}

}  // namespace tracekit::symbols
