// The pure half of the raw ftrace reader: turning sub-buffers (the pages
// trace_pipe_raw hands out) into events paired with their kernel stacks.
// No I/O here: a libtraceevent handle built from format text, pages as byte
// spans, kernel symbols as a parsed table. Reader does the reading; tests
// feed recorded pages.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ftrace/reader.hpp"
#include "symbols/tracing_frames.hpp"
#include "util/result.hpp"

struct tep_handle;
struct kbuffer;

namespace tracekit::ftrace {

struct TepDeleter {
  void operator()(tep_handle* t) const;
};
using TepPtr = std::unique_ptr<tep_handle, TepDeleter>;

// One event's format file, as read from events/<system>/<event>/format.
struct FormatText {
  std::string system;
  std::string text;
};

// A libtraceevent handle for this machine's long size and byte order, with
// the ring buffer page header (events/header_page) and the given event
// formats parsed. Formats libtraceevent cannot parse are skipped and counted
// in *failures (if given): a kernel's odd format must not stop the rest.
// Error: no handle, or header_page unparsable.
Result<TepPtr> tep_from_formats(std::string_view header_page,
                                const std::vector<FormatText>& formats, int* failures = nullptr);

// Decodes sub-buffers of any number of CPUs and pairs each event with the
// kernel_stack and user_stack records that follow it on the same CPU (see
// reader.hpp).
// Events handed to the callback point into the decoder's buffers or the page
// being decoded: valid only during the call.
class Decoder {
 public:
  // tep: the formats (with ftrace:kernel_stack and user_stack for the
  // stacks paired), not owned, must outlive the decoder. symbols: to strip
  // tracing frames from kernel stacks by name; may be null (nothing
  // stripped), not owned. Error: the handle has no events, or a stack kind
  // to pair whose format is missing or unexpected.
  static Result<Decoder> create(tep_handle* tep, StackKinds stacks,
                                const symbols::KernelSymbols* symbols);

  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;
  ~Decoder();

  // Decodes one sub-buffer read from cpu's trace_pipe_raw (as many bytes as
  // read() returned) and calls fn for every event that is complete; an event
  // still waiting for its stack is kept (copied) for the next page of that
  // CPU. Returns the number of events handed out. A page whose header claims
  // more data than page holds is skipped and counted in bad_pages().
  size_t decode_page(int cpu, std::span<const uint8_t> page, const Reader::Callback& fn);
  // Hands out every event still waiting for a stack, without one.
  size_t finish(const Reader::Callback& fn);
  // The timestamp of cpu's event still waiting for a stack, if it has one.
  std::optional<uint64_t> pending_ts(int cpu) const;

  // Events handed out without a stack they were expected to have.
  uint64_t unpaired() const { return unpaired_; }
  // Stack records of a paired kind with no event of the same pid before
  // them (stacks of a kind not paired are skipped uncounted).
  uint64_t orphan_stacks() const { return orphan_stacks_; }
  // Pages whose header said events were lost before them (overwrite mode).
  uint64_t missed_pages() const { return missed_pages_; }
  uint64_t bad_pages() const { return bad_pages_; }

 private:
  Decoder() = default;
  struct CpuState;
  CpuState& cpu_state(int cpu);
  void hold_pending(CpuState& c, const uint8_t* page_begin, const uint8_t* page_end);
  bool complete(const Event& e) const;
  size_t emit_pending(CpuState& c, const Reader::Callback& fn);
  void set_stack(CpuState& c, const uint8_t* rec, size_t len, uint64_t ts);
  void set_user_stack(CpuState& c, const uint8_t* rec, size_t len, uint64_t ts);

  struct Field {
    int offset = 0;
    int size = 0;
  };
  struct KbufferDeleter {
    void operator()(kbuffer* k) const;
  };
  std::unique_ptr<kbuffer, KbufferDeleter> kbuf_;
  symbols::TracingFrames tracing_;
  StackKinds pair_;
  Field type_, pid_, stack_size_, stack_caller_, user_tgid_, user_caller_;
  int user_entries_ = 0;    // user_stack's caller[] length
  int stack_id_ = -1;       // ftrace:kernel_stack
  int user_stack_id_ = -1;  // ftrace:user_stack (options/userstacktrace)
  std::vector<std::unique_ptr<CpuState>> cpus_;  // by CPU number
  uint64_t unpaired_ = 0, orphan_stacks_ = 0, missed_pages_ = 0, bad_pages_ = 0;
};

}  // namespace tracekit::ftrace
