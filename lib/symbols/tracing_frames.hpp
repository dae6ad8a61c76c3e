// The frames the tracing machinery puts on top of a kernel stack taken at a
// trace event: the tracepoint glue (trace_event_raw_event_*, __traceiter_*,
// perf_trace_*), the syscall tracepoints, the trigger and stack-saving code,
// the function tracer, kprobe/kretprobe/uprobe dispatch. Kernel stacks are
// stripped of them where they come in (ftrace's kernel_stack records in
// ftrace/decode, perf callchains of tracepoint samples in the engines that
// read them), so a stack starts at the traced function or its caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tracekit::symbols {

class KernelSymbols;

// True for a frame of the tracing machinery, by symbol name.
bool is_tracing_frame(std::string_view symbol);

// Leading tracing frames of stacks, by address: every frame is looked up
// once (as a return address), the answers cached by address in a small
// direct-mapped table (stacks repeat the same few top frames, and a symbol
// lookup plus name matching per frame would cost more than the rest of
// decoding).
class TracingFrames {
 public:
  // symbols: not owned, must outlive this; null: nothing is stripped.
  explicit TracingFrames(const KernelSymbols* symbols = nullptr);
  // How many of stack's leading frames (leaf first) are tracing frames; 0
  // when all are: a stack made only of them (a uprobe's int3 path) is kept
  // whole, an event never loses the stack it came with.
  size_t leading(std::span<const uint64_t> stack);
  // stack without its leading tracing frames.
  std::span<const uint64_t> strip(std::span<const uint64_t> stack) {
    return stack.subspan(leading(stack));
  }

 private:
  bool tracing(uint64_t addr);
  struct Slot {
    uint64_t addr = 0;
    bool tracing = false;
  };
  const KernelSymbols* symbols_;
  std::vector<Slot> cache_;
};

}  // namespace tracekit::symbols
