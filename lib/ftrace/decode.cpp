// How this works: a sub-buffer from trace_pipe_raw is a header (timestamp,
// commit = bytes of data plus "events were lost" flags) followed by records;
// kbuffer walks them, folding time extends and padding into timestamps, and
// gives each record's data: the event's common fields (common_type,
// common_pid at offsets libtraceevent read from the format files), then its
// own fields. A stacktrace trigger writes a kernel_stack record right after
// the event that fired it, on the same CPU, so each CPU keeps at most one
// pending event: the next record either is its stack (same pid: hand both
// out) or shows that none is coming (hand the pending event out alone). A
// pending event at the end of a page waits for the CPU's next page; its
// bytes are copied first, since the page buffer is reused by the next read.
// kernel_stack's "size" field is the number of frames (the format's
// caller[8] is a fixed-size declaration the kernel does not keep to), so
// the frames are read up to size, bounded by the record's length, and
// copied to an aligned buffer: records are only 4-byte aligned in the page.
// A user_stack record (options/userstacktrace) comes after the kernel_stack
// record, when there is one, and is paired the same way; its caller[] is
// fixed-size, ended early by a 0 entry.
// The frames the tracing machinery adds on top (the trigger's call chain,
// the syscall tracepoint glue, kprobe/ftrace handlers) are stripped
// (symbols/tracing_frames.hpp).
#include "ftrace/decode.hpp"

#include <traceevent/event-parse.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "ftrace/kbuffer.hpp"
#include "symbols/kallsyms.hpp"
#include "symbols/tracing_frames.hpp"

namespace tracekit::ftrace {

namespace {

// The sub-buffer header's commit word: data bytes in the low bits, loss flags
// in the top ones (kernel ring_buffer.c RB_MISSED_EVENTS/RB_MISSED_STORED).
constexpr uint64_t kCommitMask = (1u << 27) - 1;
constexpr uint64_t kMissedStored = 1u << 30;

uint64_t read_uint(const uint8_t* p, int size) {
  switch (size) {
    case 1:
      return *p;
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, p, 8);
      return v;
    }
    default:
      return 0;
  }
}

}  // namespace

void TepDeleter::operator()(tep_handle* t) const { tep_free(t); }

Result<TepPtr> tep_from_formats(std::string_view header_page,
                                const std::vector<FormatText>& formats, int* failures) {
  TepPtr tep(tep_alloc());
  if (!tep) return Error{ENOMEM, "cannot allocate a libtraceevent handle", {}, {}};
  tep_set_long_size(tep.get(), sizeof(long));
  tep_set_page_size(tep.get(), static_cast<int>(sysconf(_SC_PAGESIZE)));
  // tep_parse_header_page wants a writable buffer.
  std::string header(header_page);
  if (tep_parse_header_page(tep.get(), header.data(), header.size(), sizeof(long)) != 0)
    return Error{0, "cannot parse the ring buffer page header", "events/header_page", {}};
  int failed = 0;
  for (auto& f : formats)
    if (tep_parse_event(tep.get(), f.text.data(), f.text.size(), f.system.c_str()) != 0) ++failed;
  if (failures) *failures = failed;
  return tep;
}

struct Decoder::CpuState {
  bool has_pending = false;
  Event pending;
  // The pending event's bytes, and its stack records', once their page is
  // gone; its frames, aligned (records are only 4-byte aligned in a page).
  std::vector<uint8_t> held, held_stack, held_user_stack;
  std::vector<uint64_t> frames, user_frames;
};

std::optional<uint64_t> Decoder::pending_ts(int cpu) const {
  const auto i = static_cast<size_t>(cpu);
  if (cpu < 0 || i >= cpus_.size() || !cpus_[i] || !cpus_[i]->has_pending) return std::nullopt;
  return cpus_[i]->pending.ts;
}

void Decoder::KbufferDeleter::operator()(kbuffer* k) const { kbuffer_free(k); }

Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;
Decoder::~Decoder() = default;

Result<Decoder> Decoder::create(tep_handle* tep, StackKinds stacks,
                                const symbols::KernelSymbols* symbols) {
  if (!tep || tep_get_events_count(tep) == 0)
    return Error{0, "no event formats loaded", {}, "was the events directory readable?"};
  Decoder d;
  d.pair_ = stacks;

  tep_event* stack = tep_find_event_by_name(tep, "ftrace", "kernel_stack");
  tep_event* user = tep_find_event_by_name(tep, "ftrace", "user_stack");
  // Every event shares the common fields.
  tep_event* any = stack ? stack : user ? user : tep_get_event(tep, 0);
  tep_format_field* type = tep_find_common_field(any, "common_type");
  tep_format_field* pid = tep_find_common_field(any, "common_pid");
  if (!type || !pid) return Error{0, "event formats without common_type/common_pid", {}, {}};
  d.type_ = {type->offset, type->size};
  d.pid_ = {pid->offset, pid->size};

  if (stack) {
    tep_format_field* size = tep_find_field(stack, "size");
    tep_format_field* caller = tep_find_field(stack, "caller");
    if (!size || !caller)
      return Error{0, "unexpected ftrace:kernel_stack format (no size or caller field)", {}, {}};
    d.stack_id_ = stack->id;
    d.stack_size_ = {size->offset, size->size};
    d.stack_caller_ = {caller->offset,
                       caller->elementsize > 0 ? static_cast<int>(caller->elementsize) : 8};
  } else if (stacks.kernel) {
    return Error{0, "no ftrace:kernel_stack format", "events/ftrace/kernel_stack/format",
                 "load the ftrace event system"};
  }
  if (user) {
    tep_format_field* tgid = tep_find_field(user, "tgid");
    tep_format_field* caller = tep_find_field(user, "caller");
    if (tgid && caller && caller->elementsize == 8 && caller->arraylen > 0) {
      d.user_stack_id_ = user->id;
      d.user_tgid_ = {tgid->offset, tgid->size};
      d.user_caller_ = {caller->offset, 8};
      d.user_entries_ = static_cast<int>(caller->arraylen);
    } else if (stacks.user) {
      return Error{0, "unexpected ftrace:user_stack format (no tgid, or no caller[] of 64-bit entries)",
                   "events/ftrace/user_stack/format", {}};
    }
  } else if (stacks.user) {
    return Error{0, "no ftrace:user_stack format", "events/ftrace/user_stack/format",
                 "load the ftrace event system"};
  }

  d.tracing_ = symbols::TracingFrames(symbols);
  d.kbuf_.reset(kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
                              KBUFFER_ENDIAN_SAME_AS_HOST));
  if (!d.kbuf_) return Error{ENOMEM, "cannot allocate a kbuffer", {}, {}};
  return d;
}

Decoder::CpuState& Decoder::cpu_state(int cpu) {
  auto i = static_cast<size_t>(cpu);
  if (i >= cpus_.size()) cpus_.resize(i + 1);
  if (!cpus_[i]) {
    cpus_[i] = std::make_unique<CpuState>();
    cpus_[i]->frames.reserve(256);
  }
  return *cpus_[i];
}

void Decoder::set_stack(CpuState& c, const uint8_t* rec, size_t len, uint64_t ts) {
  Event& e = c.pending;
  e.has_stack = true;
  e.stack = {};
  e.stack_record = std::span<const uint8_t>(rec, len);
  e.stack_ts = ts;
  size_t off = static_cast<size_t>(stack_caller_.offset);
  size_t width = static_cast<size_t>(stack_caller_.size);
  if (len < off || width != sizeof(uint64_t)) return;
  int64_t n = static_cast<int32_t>(read_uint(rec + stack_size_.offset, stack_size_.size));
  size_t count = n > 0 ? static_cast<size_t>(n) : 0;
  count = std::min(count, (len - off) / width);
  c.frames.resize(count);
  std::memcpy(c.frames.data(), rec + off, count * width);
  e.stack = tracing_.strip(c.frames);
}

void Decoder::set_user_stack(CpuState& c, const uint8_t* rec, size_t len, uint64_t ts) {
  Event& e = c.pending;
  e.has_user_stack = true;
  e.user_stack = {};
  e.user_stack_record = std::span<const uint8_t>(rec, len);
  e.user_stack_ts = ts;
  if (len >= static_cast<size_t>(user_tgid_.offset + user_tgid_.size))
    e.user_tgid = static_cast<int>(read_uint(rec + user_tgid_.offset, user_tgid_.size));
  size_t off = static_cast<size_t>(user_caller_.offset);
  if (len < off) return;
  size_t count = std::min(static_cast<size_t>(user_entries_), (len - off) / sizeof(uint64_t));
  c.user_frames.resize(count);
  std::memcpy(c.user_frames.data(), rec + off, count * sizeof(uint64_t));
  // The kernel zero-fills the entries it did not walk; kernels before 5.2
  // also ended a short walk with ULONG_MAX.
  size_t n = 0;
  while (n < count && c.user_frames[n] != 0 && c.user_frames[n] != ~uint64_t{0}) ++n;
  e.user_stack = std::span<const uint64_t>(c.user_frames.data(), n);
}

bool Decoder::complete(const Event& e) const {
  return (!pair_.kernel || e.has_stack) && (!pair_.user || e.has_user_stack);
}

size_t Decoder::emit_pending(CpuState& c, const Reader::Callback& fn) {
  if (!c.has_pending) return 0;
  c.has_pending = false;
  if (!complete(c.pending)) ++unpaired_;
  fn(c.pending);
  return 1;
}

void Decoder::hold_pending(CpuState& c, const uint8_t* page_begin, const uint8_t* page_end) {
  auto on_page = [&](std::span<const uint8_t> s) {
    return !s.empty() && s.data() >= page_begin && s.data() < page_end;
  };
  Event& e = c.pending;
  if (on_page(e.data)) {
    c.held.assign(e.data.begin(), e.data.end());
    e.data = std::span<const uint8_t>(c.held.data(), c.held.size());
  }
  if (on_page(e.stack_record)) {
    c.held_stack.assign(e.stack_record.begin(), e.stack_record.end());
    e.stack_record = std::span<const uint8_t>(c.held_stack.data(), c.held_stack.size());
  }
  if (on_page(e.user_stack_record)) {
    c.held_user_stack.assign(e.user_stack_record.begin(), e.user_stack_record.end());
    e.user_stack_record =
        std::span<const uint8_t>(c.held_user_stack.data(), c.held_user_stack.size());
  }
}

size_t Decoder::decode_page(int cpu, std::span<const uint8_t> page, const Reader::Callback& fn) {
  CpuState& c = cpu_state(cpu);
  // Check the header against the bytes we have before kbuffer trusts it.
  const size_t start = sizeof(uint64_t) + sizeof(long);
  if (page.size() < start) {
    ++bad_pages_;
    return 0;
  }
  uint64_t commit = read_uint(page.data() + sizeof(uint64_t), sizeof(long));
  size_t need = start + (commit & kCommitMask) + ((commit & kMissedStored) ? sizeof(long) : 0);
  if (need > page.size()) {
    ++bad_pages_;
    return 0;
  }
  auto* base = const_cast<uint8_t*>(page.data());  // kbuffer only reads it
  if (kbuffer_load_subbuffer(kbuf_.get(), base) != 0) {
    ++bad_pages_;
    return 0;
  }

  size_t handed = 0;
  if (kbuffer_missed_events(kbuf_.get()) != 0) {
    // Records were lost just before this page: a pending event's stack may
    // be among them, and a stack at the top of this page may belong to a
    // lost event.
    ++missed_pages_;
    handed += emit_pending(c, fn);
  }

  const uint8_t* end = page.data() + page.size();
  unsigned long long ts = 0;
  for (void* d = kbuffer_read_event(kbuf_.get(), &ts); d;
       d = kbuffer_next_event(kbuf_.get(), &ts)) {
    const auto* rec = static_cast<const uint8_t*>(d);
    int size = kbuffer_event_size(kbuf_.get());
    if (size <= 0 || rec + size > end) break;
    auto len = static_cast<size_t>(size);
    if (len < static_cast<size_t>(pid_.offset + pid_.size)) continue;
    int type = static_cast<int>(read_uint(rec + type_.offset, type_.size));
    int pid = static_cast<int>(static_cast<int32_t>(read_uint(rec + pid_.offset, pid_.size)));

    // A stack record belongs to the pending event of its pid that still
    // waits for one of its kind; the user stack comes last.
    if (type == stack_id_) {
      if (pair_.kernel && c.has_pending && c.pending.pid == pid && !c.pending.has_stack &&
          !c.pending.has_user_stack) {
        set_stack(c, rec, len, ts);
        if (complete(c.pending)) handed += emit_pending(c, fn);
      } else if (pair_.kernel) {
        ++orphan_stacks_;
      }
      continue;
    }
    if (type == user_stack_id_) {
      if (pair_.user && c.has_pending && c.pending.pid == pid && !c.pending.has_user_stack) {
        set_user_stack(c, rec, len, ts);
        handed += emit_pending(c, fn);
      } else if (pair_.user) {
        ++orphan_stacks_;
      }
      continue;
    }

    handed += emit_pending(c, fn);
    Event& e = c.pending;
    e = Event{};
    e.cpu = cpu;
    e.ts = ts;
    e.pid = pid;
    e.type = type;
    e.data = std::span<const uint8_t>(rec, len);
    if (pair_.kernel || pair_.user) {
      c.has_pending = true;
    } else {
      fn(e);
      ++handed;
    }
  }
  if (c.has_pending) hold_pending(c, page.data(), end);
  return handed;
}

size_t Decoder::finish(const Reader::Callback& fn) {
  size_t handed = 0;
  for (auto& c : cpus_)
    if (c) handed += emit_pending(*c, fn);
  return handed;
}

}  // namespace tracekit::ftrace
