// Which frames are the tracing machinery's, by name and by address.
#include "symbols/tracing_frames.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "symbols/kallsyms.hpp"

namespace tracekit::symbols {
namespace {

TEST(TracingFramesTest, Names) {
  struct Case {
    const char* name;
    bool tracing;
  } cases[] = {
      // seen on top of trigger stacks on 6.18
      {"ftrace_syscall_enter", true},
      {"ftrace_syscall_exit", true},
      {"trace_event_raw_event_sched_switch", true},
      {"trace_event_raw_event_sched_wakeup_template", true},
      {"__traceiter_sched_switch", true},
      // perf's twins, and the trigger/stack-saving path
      {"perf_trace_sched_switch", true},
      {"perf_syscall_enter", true},
      {"event_triggers_call", true},
      {"__trace_stack", true},
      {"stack_trace_save", true},
      // kprobes, kretprobes, optprobes, function tracer (VM kernel)
      {"kprobe_ftrace_handler", true},
      {"kprobe_dispatcher", true},
      {"kprobe_trace_func", true},
      {"kprobe_int3_handler", true},
      {"kretprobe_dispatcher", true},
      {"__kretprobe_trampoline_handler", true},
      {"aggr_pre_handler", true},
      {"opt_pre_handler", true},
      {"optimized_callback", true},
      {"kprobe_optinsn_page", true},
      {"ftrace_regs_caller", true},
      {"ftrace_trampoline", true},
      {"function_trace_call", true},
      {"function_stack_trace_call", true},
      {"exc_int3", true},
      {"asm_exc_int3", true},
      {"uprobe_dispatcher", true},
      {"trace_event_raw_event_sys_enter.constprop.0", true},
      // where a traced point sits, and ordinary kernel code
      {"syscall_trace_enter", false},
      {"syscall_exit_work", false},
      {"do_syscall_64", false},
      {"entry_SYSCALL_64_after_hwframe", false},
      {"__schedule", false},
      {"schedule", false},
      {"kprobes_module_callback", false},
      {"tracepoint_probe_register", false},
      {"do_sys_openat2", false},
      {"", false},
  };
  for (auto& c : cases) EXPECT_EQ(is_tracing_frame(c.name), c.tracing) << c.name;
}

TEST(TracingFramesTest, LeadingFramesByAddress) {
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000100 t trace_event_raw_event_sched_switch\n"
      "ffffffff81000200 t __traceiter_sched_switch\n"
      "ffffffff81000300 T __schedule\n"
      "ffffffff81000400 T schedule\n"
      "ffffffff81000500 T _etext\n");
  auto syms = KernelSymbols::parse(in);
  TracingFrames t(&syms);
  std::vector<uint64_t> stack{0xffffffff81000110, 0xffffffff81000210, 0xffffffff81000310,
                              0xffffffff81000410};
  EXPECT_EQ(t.leading(stack), 2u);
  EXPECT_EQ(t.strip(stack).size(), 2u);
  EXPECT_EQ(t.strip(stack)[0], 0xffffffff81000310u);
  EXPECT_EQ(t.leading(stack), 2u);  // the cached answers
  // A return address just past a tracing function's end is looked up - 1.
  std::vector<uint64_t> edge{0xffffffff81000300, 0xffffffff81000410};
  EXPECT_EQ(t.leading(edge), 1u);
  // Only tracing frames: kept whole.
  std::vector<uint64_t> all{0xffffffff81000110, 0xffffffff81000210};
  EXPECT_EQ(t.leading(all), 0u);
  EXPECT_EQ(t.leading({}), 0u);
  TracingFrames none;
  EXPECT_EQ(none.leading(stack), 0u);
}

// A kprobe on ftrace (6.1) puts its ftrace trampoline on top of the stack:
// an address in module space that kallsyms names ("ftrace_trampoline
// [__builtin__ftrace]") only while the trampoline lives. Read after, with
// no module symbol below it, it resolves to nothing (it once took the name
// of vmlinux's last text symbol, exit_amd_microcode) and is a tracing frame.
TEST(TracingFramesTest, AnUnnamedTrampolineInModuleSpaceIsATracingFrame) {
  std::istringstream in(
      "ffffffff81000000 T _stext\n"
      "ffffffff81000300 T vfs_read\n"
      "ffffffff81000400 T ksys_read\n"
      "ffffffff81000500 T _etext\n"
      "ffffffff81000600 t exit_amd_microcode\n"
      "ffffffff81200000 B _end\n"
      "000000000001fd60 A kprobe_ctlblk\n");
  auto syms = KernelSymbols::parse(in);
  EXPECT_FALSE(syms.lookup(0xffffffffc04a40c8).has_value());
  EXPECT_EQ(syms.lookup(0xffffffff81000610)->name, "exit_amd_microcode");
  TracingFrames t(&syms);
  std::vector<uint64_t> stack{0xffffffffc04a40c8, 0xffffffff81000310, 0xffffffff81000410};
  EXPECT_EQ(t.leading(stack), 1u);
  // A module's function stays (the module's symbols cover it).
  std::istringstream with_module(
      "ffffffff81000300 T vfs_read\n"
      "ffffffff81200000 B _end\n"
      "ffffffffc04a0000 t ext4_read\t[ext4]\n");
  auto mod = KernelSymbols::parse(with_module);
  TracingFrames m(&mod);
  EXPECT_EQ(m.leading(stack), 0u);
}

}  // namespace
}  // namespace tracekit::symbols
