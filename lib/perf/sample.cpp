// How this works: a PERF_RECORD_SAMPLE has no self-description; its fields
// follow the header in a fixed kernel order (perf_output_sample()), each
// present only when its bit is in attr.sample_type. A Cursor reads them in that
// order and fails rather than reading past the record, so a record cut short
// or decoded with the wrong sample_type is rejected instead of misread. Fixed
// fields are copied out with memcpy (no alignment assumed); only the callchain
// is returned as a span of u64 into the record, which is why it needs an
// aligned record.
#include "perf/sample.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "kernel/features.hpp"
#include "perf/event.hpp"
#include "util/strings.hpp"

namespace tracekit::perf {

namespace {

constexpr uint64_t kSupported = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                                PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                                PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN |
                                PERF_SAMPLE_RAW | PERF_SAMPLE_REGS_USER |
                                PERF_SAMPLE_STACK_USER;

// Values from here up are context markers, not addresses (PERF_CONTEXT_MAX).
constexpr uint64_t kFirstMarker = static_cast<uint64_t>(-4095);

class Cursor {
 public:
  Cursor(std::span<const uint8_t> bytes, size_t pos) : b_(bytes), pos_(pos) {}

  template <class T>
  bool get(T& v) {
    if (left() < sizeof v) return false;
    std::memcpy(&v, b_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return true;
  }
  bool skip(size_t n) {
    if (left() < n) return false;
    pos_ += n;
    return true;
  }
  size_t left() const { return b_.size() - pos_; }
  size_t pos() const { return pos_; }
  const uint8_t* here() const { return b_.data() + pos_; }

 private:
  std::span<const uint8_t> b_;
  size_t pos_;
};

// The record limited to the size its header declares, or empty when the
// header is missing, of another type, or declares more than is there.
std::span<const uint8_t> body(std::span<const uint8_t> record, uint32_t type, uint32_t type2 = 0,
                              uint16_t* misc = nullptr) {
  perf_event_header h;
  if (record.size() < sizeof h) return {};
  std::memcpy(&h, record.data(), sizeof h);
  if (h.type != type && (type2 == 0 || h.type != type2)) return {};
  if (h.size < sizeof h || h.size > record.size()) return {};
  if (misc != nullptr) *misc = h.misc;
  return record.first(h.size);
}

}  // namespace

bool decode_sample(uint64_t sample_type, std::span<const uint8_t> record, Sample& out,
                   uint64_t regs_user_mask) {
  if ((sample_type & ~kSupported) != 0) return false;
  auto rec = body(record, PERF_RECORD_SAMPLE);
  if (rec.empty()) return false;
  Cursor c(rec, sizeof(perf_event_header));

  if ((sample_type & PERF_SAMPLE_IP) && !c.get(out.ip)) return false;
  if ((sample_type & PERF_SAMPLE_TID) && !(c.get(out.pid) && c.get(out.tid))) return false;
  if ((sample_type & PERF_SAMPLE_TIME) && !c.get(out.time)) return false;
  if ((sample_type & PERF_SAMPLE_ADDR) && !c.get(out.addr)) return false;
  if ((sample_type & PERF_SAMPLE_ID) && !c.get(out.id)) return false;
  if ((sample_type & PERF_SAMPLE_STREAM_ID) && !c.get(out.stream_id)) return false;
  if (sample_type & PERF_SAMPLE_CPU) {
    uint32_t reserved;
    if (!(c.get(out.cpu) && c.get(reserved))) return false;
  }
  if ((sample_type & PERF_SAMPLE_PERIOD) && !c.get(out.period)) return false;
  if (sample_type & PERF_SAMPLE_CALLCHAIN) {
    uint64_t nr;
    if (!c.get(nr) || nr > c.left() / sizeof(uint64_t)) return false;
    if (reinterpret_cast<uintptr_t>(c.here()) % alignof(uint64_t) != 0) return false;
    out.callchain = {reinterpret_cast<const uint64_t*>(c.here()), static_cast<size_t>(nr)};
    c.skip(nr * sizeof(uint64_t));
  }
  if (sample_type & PERF_SAMPLE_RAW) {
    uint32_t size;
    if (!c.get(size) || size > c.left()) return false;
    out.raw = {c.here(), size};
    c.skip(size);
    // The kernel pads size itself so u32 + payload fills whole u64s; pad here
    // too in case a producer did not, so the record still ends where it must.
    if (!c.skip((8 - c.pos() % 8) % 8)) return false;
  }
  if (sample_type & PERF_SAMPLE_REGS_USER) {
    if (!c.get(out.regs_abi)) return false;
    if (out.regs_abi != PERF_SAMPLE_REGS_ABI_NONE) {
      auto n = static_cast<size_t>(std::popcount(regs_user_mask));
      if (n > c.left() / sizeof(uint64_t)) return false;
      if (reinterpret_cast<uintptr_t>(c.here()) % alignof(uint64_t) != 0) return false;
      out.regs_user = {reinterpret_cast<const uint64_t*>(c.here()), n};
      c.skip(n * sizeof(uint64_t));
    }
  }
  if (sample_type & PERF_SAMPLE_STACK_USER) {
    // u64 size; then, only when size is not 0, size bytes and u64 dyn_size
    // (how many of them the kernel could copy).
    if (!c.get(out.stack_user_size)) return false;
    if (out.stack_user_size != 0) {
      if (out.stack_user_size > c.left()) return false;
      const uint8_t* data = c.here();
      c.skip(out.stack_user_size);
      uint64_t dyn_size;
      if (!c.get(dyn_size) || dyn_size > out.stack_user_size) return false;
      out.stack_user = {data, static_cast<size_t>(dyn_size)};
    }
  }
  return c.left() == 0;
}

Chains split_callchain(std::span<const uint64_t> chain) {
  Chains out;
  bool have_kernel = false, have_user = false;
  uint64_t context = PERF_CONTEXT_KERNEL;  // frames before any marker
  size_t start = 0;
  // Closes the run of frames [start, end) under context. Only the first run of
  // each side is kept: the kernel writes each side once.
  auto close = [&](size_t end) {
    auto run = chain.subspan(start, end - start);
    if (context == PERF_CONTEXT_KERNEL && !have_kernel && !run.empty()) {
      out.kernel = run;
      have_kernel = true;
    } else if (context == PERF_CONTEXT_USER && !have_user && !run.empty()) {
      out.user = run;
      have_user = true;
    }
  };
  for (size_t i = 0; i < chain.size(); ++i) {
    if (chain[i] >= kFirstMarker) {
      close(i);
      context = chain[i];
      start = i + 1;
    }
  }
  close(chain.size());
  return out;
}

bool decode_comm(std::span<const uint8_t> record, Comm& out) {
  uint16_t misc = 0;
  auto rec = body(record, PERF_RECORD_COMM, 0, &misc);
  Cursor c(rec, rec.empty() ? 0 : sizeof(perf_event_header));
  if (!(c.get(out.pid) && c.get(out.tid))) return false;
  auto* name = reinterpret_cast<const char*>(c.here());
  size_t len = strnlen(name, c.left());
  if (len == c.left()) return false;  // no NUL: cut short
  out.comm = {name, len};
  out.exec = (misc & PERF_RECORD_MISC_COMM_EXEC) != 0;
  return true;
}

bool decode_task(std::span<const uint8_t> record, Task& out) {
  auto rec = body(record, PERF_RECORD_FORK, PERF_RECORD_EXIT);
  Cursor c(rec, rec.empty() ? 0 : sizeof(perf_event_header));
  return c.get(out.pid) && c.get(out.ppid) && c.get(out.tid) && c.get(out.ptid) && c.get(out.time);
}

bool decode_lost(std::span<const uint8_t> record, uint64_t& lost) {
  auto rec = body(record, PERF_RECORD_LOST);
  Cursor c(rec, rec.empty() ? 0 : sizeof(perf_event_header));
  uint64_t id;
  return c.get(id) && c.get(lost);
}

bool decode_context_switch(uint64_t sample_type, std::span<const uint8_t> record,
                           ContextSwitch& out) {
  uint16_t misc = 0;
  auto rec = body(record, PERF_RECORD_SWITCH_CPU_WIDE, 0, &misc);
  Cursor c(rec, rec.empty() ? 0 : sizeof(perf_event_header));
  if (rec.empty() || !(c.get(out.other_pid) && c.get(out.other_tid))) return false;
  out.out = (misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
  out.preempt = (misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
  // sample_id: only the fields of sample_type, in this order.
  if (sample_type & PERF_SAMPLE_TID)
    if (!(c.get(out.pid) && c.get(out.tid))) return false;
  if (sample_type & PERF_SAMPLE_TIME)
    if (!c.get(out.time)) return false;
  if (sample_type & PERF_SAMPLE_ID)
    if (!c.skip(8)) return false;
  if (sample_type & PERF_SAMPLE_STREAM_ID)
    if (!c.skip(8)) return false;
  if (sample_type & PERF_SAMPLE_CPU) {
    uint32_t res;
    if (!(c.get(out.cpu) && c.get(res))) return false;
  }
  return true;
}

namespace {

// MMAP and MMAP2 share their start and their end (the NUL-padded filename,
// then any sample_id); only MMAP2 has the identity, prot and flags between.
bool decode_mapping(std::span<const uint8_t> record, uint32_t type, Mmap2& out) {
  uint16_t misc = 0;
  auto rec = body(record, type, 0, &misc);
  if (rec.empty()) return false;
  Cursor c(rec, sizeof(perf_event_header));
  if (!(c.get(out.pid) && c.get(out.tid) && c.get(out.addr) && c.get(out.len) && c.get(out.pgoff)))
    return false;
  out.data = (misc & PERF_RECORD_MISC_MMAP_DATA) != 0;
  if (type == PERF_RECORD_MMAP2) {
    out.has_build_id = (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) != 0;
    if (out.has_build_id) {
      uint8_t size;
      if (!c.get(size) || !c.skip(3) || size > 20 || c.left() < 20) return false;
      out.build_id = {c.here(), size};
      c.skip(20);
    } else if (!(c.get(out.maj) && c.get(out.min) && c.get(out.ino) && c.get(out.ino_generation))) {
      return false;
    }
    if (!(c.get(out.prot) && c.get(out.flags))) return false;
  }
  auto* name = reinterpret_cast<const char*>(c.here());
  size_t len = strnlen(name, c.left());
  if (len == c.left()) return false;  // no NUL: cut short
  out.filename = {name, len};
  return true;
}

}  // namespace

bool decode_mmap2(std::span<const uint8_t> record, Mmap2& out) {
  return decode_mapping(record, PERF_RECORD_MMAP2, out);
}

bool decode_mmap(std::span<const uint8_t> record, Mmap2& out) {
  return decode_mapping(record, PERF_RECORD_MMAP, out);
}

bool decode_sample_id(uint64_t sample_type, std::span<const uint8_t> record, SampleId& out) {
  perf_event_header h;
  if (record.size() < sizeof h) return false;
  std::memcpy(&h, record.data(), sizeof h);
  if (h.type == PERF_RECORD_SAMPLE || h.size < sizeof h || h.size > record.size()) return false;
  size_t size = 0;
  for (uint64_t bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                       PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
    if (sample_type & bit) size += 8;
  if (h.size - sizeof h < size) return false;
  Cursor c(record.first(h.size), h.size - size);
  if (sample_type & PERF_SAMPLE_TID) c.get(out.pid), c.get(out.tid);
  if (sample_type & PERF_SAMPLE_TIME) c.get(out.time);
  if (sample_type & PERF_SAMPLE_ID) c.get(out.id);
  if (sample_type & PERF_SAMPLE_STREAM_ID) c.get(out.stream_id);
  if (sample_type & PERF_SAMPLE_CPU) {
    uint32_t res;
    c.get(out.cpu), c.get(res);
  }
  // IDENTIFIER repeats ID at a fixed place; it is the id when ID is unset.
  uint64_t identifier;
  if ((sample_type & PERF_SAMPLE_IDENTIFIER) && c.get(identifier) &&
      !(sample_type & PERF_SAMPLE_ID))
    out.id = identifier;
  return true;
}

void request_callchains(perf_event_attr& attr, bool kernel, bool user) {
  auto& features = kernel::Features::host();
  attr.sample_type |= PERF_SAMPLE_CALLCHAIN;
  // Before 3.7 both sides come, and the caller keeps the side it wants.
  if (features.has(kernel::Feature::kExcludeCallchain)) {
    attr.exclude_callchain_kernel = !kernel;
    attr.exclude_callchain_user = !user;
  }
  // Before 4.8 the kernel's own depth (127) holds.
  if (features.has(kernel::Feature::kSampleMaxStack))
    attr.sample_max_stack = static_cast<uint16_t>(std::min(max_stack(), 127));
}

Result<CallGraph> parse_call_graph(std::string_view text) {
  CallGraph cg;
  auto comma = text.find(',');
  std::string_view mode = text.substr(0, comma);
  if (mode == "fp" && comma == std::string_view::npos) return cg;
  if (mode != "dwarf")
    return Error{0, "invalid --call-graph '" + std::string(text) + "'", {},
                 "use fp, dwarf or dwarf,SIZE"};
  cg.mode = CallGraph::Mode::kDwarf;
  if (comma == std::string_view::npos) return cg;
  auto size = parse_int<uint64_t>(text.substr(comma + 1));
  if (!size || *size == 0 || *size > kMaxUserStack)
    return Error{0, "invalid --call-graph stack size '" + std::string(text.substr(comma + 1)) + "'",
                 {}, "SIZE is in bytes, 8 to " + std::to_string(kMaxUserStack)};
  cg.stack_size = static_cast<uint32_t>((*size + 7) / 8 * 8);
  return cg;
}

namespace {

// Error: the kernel lacks user register and stack samples
// (kernel::Feature::kUserStack, Linux 3.7), or TRACEKIT_KERNEL_FEATURES
// turned them off.
Status need_user_samples() {
  auto& features = kernel::Features::host();
  if (!features.has(kernel::Feature::kUserStack))
    return features.missing(kernel::Feature::kUserStack);
  return {};
}

// PERF_SAMPLE_STACK_USER of size bytes. Error: need_user_samples()'s.
Status request_stack_bytes(perf_event_attr& attr, uint32_t size) {
  if (auto st = need_user_samples(); !st) return st;
  attr.sample_type |= PERF_SAMPLE_STACK_USER;
  attr.sample_stack_user = size;
  return {};
}

}  // namespace

Status request_user_stack(perf_event_attr& attr, const CallGraph& cg) {
  if (auto st = request_stack_bytes(attr, cg.stack_size); !st) return st;
  attr.sample_type |= PERF_SAMPLE_REGS_USER;
  attr.sample_regs_user = kUnwindRegsMask;
  return {};
}

Status request_regs_abi(perf_event_attr& attr) {
  if ((attr.sample_type & PERF_SAMPLE_REGS_USER) != 0) return {};
  if (auto st = need_user_samples(); !st) return st;
  attr.sample_type |= PERF_SAMPLE_REGS_USER;
  attr.sample_regs_user = kAbiRegsMask;
  return {};
}

Status request_stack_top(perf_event_attr& attr) {
  return request_stack_bytes(attr, sizeof(uint64_t));
}

std::optional<uint64_t> stack_top(const Sample& s) {
  uint64_t top;
  if (s.stack_user.size() < sizeof top) return std::nullopt;
  std::memcpy(&top, s.stack_user.data(), sizeof top);
  return top;
}

std::span<const uint64_t> with_entry_caller(std::span<const uint64_t> user, uint64_t top,
                                            bool frame_entry, std::vector<uint64_t>& buf) {
  if (user.empty() || (frame_entry && user.size() >= 2 && user[1] == top)) return user;
  buf.assign(user.begin(), user.end());
  buf.insert(buf.begin() + 1, top);
  return buf;
}

uint16_t callchain_depth(const perf_event_attr& attr) {
  return attr.sample_max_stack ? attr.sample_max_stack
                               : static_cast<uint16_t>(std::min(max_stack(), 0xffff));
}

void CutStacks::warn(std::ostream& err) {
  if (n_ > 0)
    err << "WARNING: " << n_ << " stacks were cut at " << max_
        << " frames (kernel.perf_event_max_stack).\n";
  n_ = 0;
}

}  // namespace tracekit::perf
