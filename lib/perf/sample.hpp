// Decoding of records read from a perf ring: PERF_RECORD_SAMPLE laid out by
// sample_type, callchains split at the PERF_CONTEXT_* markers, and the
// side-band records that tell process names (COMM) and lifetimes
// (FORK/EXIT). Pure functions over bytes: tested on synthetic records.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string_view>
#include <vector>

#include "util/result.hpp"

namespace tracekit::perf {

// Fields of one PERF_RECORD_SAMPLE. Only those selected by sample_type are
// set; spans point into the record passed to decode_sample().
struct Sample {
  uint64_t ip = 0;
  uint32_t pid = 0;  // process (tgid)
  uint32_t tid = 0;  // thread; (u32)-1 in the last sched_switch of an exiting
                     // thread (the kernel has unhashed its pid by then)
  uint64_t time = 0;
  uint64_t addr = 0;
  uint64_t id = 0;
  uint64_t stream_id = 0;
  uint32_t cpu = 0;
  uint64_t period = 0;
  std::span<const uint64_t> callchain;  // raw, context markers included
  std::span<const uint8_t> raw;         // PERF_SAMPLE_RAW payload (an ftrace record),
                                        // with the kernel's zero padding at its end
  // PERF_SAMPLE_REGS_USER: the ABI (PERF_SAMPLE_REGS_ABI_NONE when the sample
  // hit a kernel thread: no registers then), and the registers of the
  // attr.sample_regs_user mask, lowest bit first.
  uint64_t regs_abi = 0;
  std::span<const uint64_t> regs_user;
  // PERF_SAMPLE_STACK_USER: the bytes the kernel could copy from the user
  // stack pointer up (its dyn_size; empty when it had none to give), and
  // the size asked for (attr.sample_stack_user; 0 with no user context).
  std::span<const uint8_t> stack_user;
  uint64_t stack_user_size = 0;
};

// Decodes a whole PERF_RECORD_SAMPLE record (header included) whose layout
// follows sample_type. Supports IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
// PERIOD, CALLCHAIN, RAW, REGS_USER (with regs_user_mask, the event's
// attr.sample_regs_user) and STACK_USER; any other bit in sample_type, a
// record that is not a PERF_RECORD_SAMPLE, too short for what it declares or
// with bytes left over, or (with CALLCHAIN or REGS_USER) not 8-byte aligned
// as ring records are, returns false. out may be partly written then.
bool decode_sample(uint64_t sample_type, std::span<const uint8_t> record, Sample& out,
                   uint64_t regs_user_mask = 0);

// A callchain split by context. Each span holds the frames of one side, leaf
// first, markers removed. The first kernel frame is the sampled IP, the rest
// are return addresses; the same holds for the user side.
struct Chains {
  std::span<const uint64_t> kernel;
  std::span<const uint64_t> user;
};

// Splits at PERF_CONTEXT_KERNEL / PERF_CONTEXT_USER. Any value >= (u64)-4095
// is a marker; frames under other contexts (guest, hypervisor) are dropped.
// Frames before any marker count as kernel frames.
Chains split_callchain(std::span<const uint64_t> chain);

// Whether the kernel cut the callchain at attr.sample_max_stack frames (the
// limit counts kernel and user frames together, not the context markers).
inline bool truncated(const Chains& c, uint16_t max_stack) {
  return max_stack > 0 && c.kernel.size() + c.user.size() >= max_stack;
}

// Asks attr for callchains (PERF_SAMPLE_CALLCHAIN) of the kernel side, the
// user side or both (kernels before 3.7 cannot leave a side out: the caller
// drops it), at most min(kernel.perf_event_max_stack, 127) frames (before
// 4.8: the kernel's own 127). See kernel/features.hpp.
void request_callchains(perf_event_attr& attr, bool kernel, bool user);
// The most frames a callchain of attr holds: its sample_max_stack, else the
// kernel's depth (kernel.perf_event_max_stack, 127 where there is none).
uint16_t callchain_depth(const perf_event_attr& attr);

// --call-graph fp|dwarf[,SIZE] (perf's spelling): how user stacks are
// taken. fp: the kernel walks frame pointers (PERF_SAMPLE_CALLCHAIN). dwarf:
// each sample copies the user registers and stack_size bytes of user stack,
// unwound in user space from the files' CFI (symbols/unwind.hpp).
struct CallGraph {
  enum class Mode : uint8_t { kFp, kDwarf };
  Mode mode = Mode::kFp;
  uint32_t stack_size = 8192;  // dwarf: bytes of stack per sample
  bool dwarf() const { return mode == Mode::kDwarf; }
};
// The most stack bytes a sample can carry: the kernel keeps the record
// under 64 KiB and the size a multiple of 8.
inline constexpr uint32_t kMaxUserStack = 65528;
// Parses "fp", "dwarf", "dwarf,SIZE" (SIZE in bytes, rounded up to a
// multiple of 8, 8..65528). Error: what is wrong with text. Pure.
Result<CallGraph> parse_call_graph(std::string_view text);

// x86_64 perf registers (arch/x86/include/uapi/asm/perf_regs.h) the DWARF
// unwinder needs: the 16 general-purpose ones and ip.
inline constexpr uint64_t kUnwindRegsMask = 0xff01ffULL;  // ax..ip (0-8), r8..r15 (16-23)
// One register (ip), for request_regs_abi(): the ABI comes with any mask.
inline constexpr uint64_t kAbiRegsMask = 1ULL << 8;

// Asks attr for what --call-graph dwarf unwinds: PERF_SAMPLE_REGS_USER of
// kUnwindRegsMask and PERF_SAMPLE_STACK_USER of cg.stack_size bytes. Error:
// the kernel lacks them (kernel::Feature::kUserStack, Linux 3.7), or
// TRACEKIT_KERNEL_FEATURES turned them off.
Status request_user_stack(perf_event_attr& attr, const CallGraph& cg);

// Asks attr for each sample's user register ABI (PERF_SAMPLE_REGS_USER of
// one register, ip), where nothing asked for user registers yet: Sample::
// regs_abi then tells a 32-bit task's samples (PERF_SAMPLE_REGS_ABI_32)
// from a 64-bit one's. Error: as request_user_stack() (the same feature).
Status request_regs_abi(perf_event_attr& attr);

// Asks attr for the 8 bytes at the user stack pointer of each sample
// (PERF_SAMPLE_STACK_USER, no registers): at a function's first
// instruction, the return address into its caller (with_entry_caller()).
// Error: as request_user_stack().
Status request_stack_top(perf_event_attr& attr);

// The user side of a callchain sampled at a probed function's first
// instruction (user, leaf first), with its caller. There the function has
// not pushed its frame: a frame-pointer walk goes from the ip to the return
// address saved in the caller's frame, into the caller's caller, and the
// caller's own return address is the one at the stack pointer (top: the
// sample's stack_top()). Returns user with top inserted as the second
// frame (in buf), or user as it is when it is empty or when frame_entry
// (the instruction there is push %rbp or endbr64: Linux 6.11 and later
// insert top themselves there) and its second frame is already top. The
// one case this misreads: on a kernel before 6.11, a push/endbr function
// that called itself from the one call site its caller's frame returns to
// (self-recursion through one call site) loses that one frame. Pure.
std::span<const uint64_t> with_entry_caller(std::span<const uint64_t> user, uint64_t top,
                                            bool frame_entry, std::vector<uint64_t>& buf);

// The u64 at the user stack pointer from a sample's PERF_SAMPLE_STACK_USER
// (request_stack_top()): nullopt when the kernel could copy none.
std::optional<uint64_t> stack_top(const Sample& s);

// Callchains the kernel cut at sample_max_stack: counted per sample, and
// reported once per report.
class CutStacks {
 public:
  CutStacks() = default;
  explicit CutStacks(const perf_event_attr& attr) : max_(callchain_depth(attr)) {}
  void note(const Chains& c) {
    if (truncated(c, max_)) ++n_;
  }
  uint64_t count() const { return n_; }
  // "WARNING: N stacks were cut at M frames (kernel.perf_event_max_stack)."
  // when some were; then counts from zero again.
  void warn(std::ostream& err);

 private:
  uint16_t max_ = 0;
  uint64_t n_ = 0;
};

// The side-band decoders below return false when the record is of another
// type or too short; a COMM whose name has no terminating NUL is too short.
// Any sample_id trailer (attr.sample_id_all) is ignored.

// PERF_RECORD_COMM (attr.comm = 1). comm points into the record.
struct Comm {
  uint32_t pid = 0;
  uint32_t tid = 0;
  std::string_view comm;
  bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
};
bool decode_comm(std::span<const uint8_t> record, Comm& out);

// PERF_RECORD_FORK and PERF_RECORD_EXIT (attr.task = 1).
struct Task {
  uint32_t pid = 0, ppid = 0;
  uint32_t tid = 0, ptid = 0;
  uint64_t time = 0;
};
bool decode_task(std::span<const uint8_t> record, Task& out);

// PERF_RECORD_LOST: how many records the kernel could not write.
bool decode_lost(std::span<const uint8_t> record, uint64_t& lost);

// PERF_RECORD_SWITCH_CPU_WIDE (attr.context_switch on a per-CPU event),
// with the sample_id fields attr.sample_id_all appends, laid out by
// sample_type (TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER in that order).
// A switch-in record is written in the incoming task's context: pid/tid are
// the incoming task, other_pid/other_tid the one it replaced; a switch-out
// record the other way round.
struct ContextSwitch {
  bool out = false;  // PERF_RECORD_MISC_SWITCH_OUT
  bool preempt = false;  // out while runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)
  uint32_t other_pid = 0, other_tid = 0;
  uint32_t pid = 0, tid = 0;  // from sample_id (PERF_SAMPLE_TID)
  uint64_t time = 0;          // from sample_id (PERF_SAMPLE_TIME)
  uint32_t cpu = 0;           // from sample_id (PERF_SAMPLE_CPU)
};
bool decode_context_switch(uint64_t sample_type, std::span<const uint8_t> record,
                           ContextSwitch& out);

// PERF_RECORD_MMAP2 (attr.mmap2, with attr.mmap for executable mappings or
// attr.mmap_data for the others) and PERF_RECORD_MMAP (attr.mmap without
// mmap2; older kernels). Written when a process maps something, in its
// context: pid/tid are the mapping task. Spans and views point into the
// record.
struct Mmap2 {
  uint32_t pid = 0, tid = 0;
  uint64_t addr = 0;  // start of the mapping
  uint64_t len = 0;
  uint64_t pgoff = 0;  // file offset of addr, in bytes (page aligned)
  // The file's identity: device and inode, or (PERF_RECORD_MISC_MMAP_BUILD_ID,
  // attr.build_id) its build-id instead. Zero/empty in an MMAP record and
  // for anonymous memory.
  bool has_build_id = false;
  uint32_t maj = 0, min = 0;
  uint64_t ino = 0, ino_generation = 0;
  std::span<const uint8_t> build_id;  // empty when the kernel could not read it
  uint32_t prot = 0, flags = 0;       // PROT_*, MAP_*; zero in an MMAP record
  std::string_view filename;          // a path, "//anon", "[vdso]", "[heap]", ...
  bool data = false;                  // PERF_RECORD_MISC_MMAP_DATA: not executable
};
// Both return false for another record type, a record too short for its
// fixed fields, a filename with no NUL, or a build-id size above 20. MMAP
// fills the fields it has and leaves the others at their defaults.
bool decode_mmap2(std::span<const uint8_t> record, Mmap2& out);
bool decode_mmap(std::span<const uint8_t> record, Mmap2& out);

// The sample_id trailer attr.sample_id_all appends to every record other
// than PERF_RECORD_SAMPLE: the fields of sample_type among TID, TIME, ID,
// STREAM_ID, CPU, IDENTIFIER, read from the record's end (so it works for
// any record type, whatever its variable part). Returns false for a SAMPLE
// record or one too short to hold the trailer. Meaningless (but harmless)
// on a record of an event without sample_id_all: the caller must know.
struct SampleId {
  uint32_t pid = 0, tid = 0;  // PERF_SAMPLE_TID
  uint64_t time = 0;          // PERF_SAMPLE_TIME
  uint64_t id = 0;            // PERF_SAMPLE_ID, else PERF_SAMPLE_IDENTIFIER
  uint64_t stream_id = 0;     // PERF_SAMPLE_STREAM_ID
  uint32_t cpu = 0;           // PERF_SAMPLE_CPU
};
bool decode_sample_id(uint64_t sample_type, std::span<const uint8_t> record, SampleId& out);

}  // namespace tracekit::perf
