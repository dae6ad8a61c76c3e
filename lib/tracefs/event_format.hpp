// The layout of one trace event, from its tracefs "format" file, parsed by
// libtraceevent: field offsets and sizes come from the running kernel, never
// from our headers, so raw records (PERF_SAMPLE_RAW, ftrace ring buffers)
// decode on any kernel version.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "util/result.hpp"

struct tep_handle;
struct tep_event;
struct tep_format_field;

namespace tracekit::tracefs {

class EventFormat {
 public:
  // Reads <tracing_dir>/events/<system>/<event>/format. Error: no such event
  // (hint: see available_events), or a format libtraceevent cannot parse.
  static Result<EventFormat> load(const std::string& tracing_dir, const std::string& system,
                                  const std::string& event);
  // Parses format text (what the format file holds). Pure, for tests.
  static Result<EventFormat> parse(std::string_view text, const std::string& system);

  EventFormat(EventFormat&&) noexcept;
  EventFormat& operator=(EventFormat&&) noexcept;
  ~EventFormat();

  // The event id (for perf_event_attr.config of PERF_TYPE_TRACEPOINT).
  int id() const;
  const std::string& name() const { return name_; }

  // A field by name, nullptr when the event has none.
  const tep_format_field* field(const char* name) const;
  // A number field of a raw record; nullopt when the record is too short.
  std::optional<uint64_t> number(const tep_format_field* f, std::span<const uint8_t> raw) const;
  // A char[] field (a comm), up to its first NUL.
  std::string_view string(const tep_format_field* f, std::span<const uint8_t> raw) const;
  // The record printed by the event's own print format, as in the trace file
  // ("prev_comm=bash prev_pid=5 ... ==> next_comm=..."), for values whose
  // meaning the kernel defines in its print format (sched_switch prev_state).
  // "" when the record is shorter than the event's fields (libtraceevent
  // would read past it).
  std::string print(std::span<const uint8_t> raw) const;

 private:
  EventFormat() = default;
  struct TepDeleter {
    void operator()(tep_handle* t) const;
  };
  std::unique_ptr<tep_handle, TepDeleter> tep_;
  tep_event* event_ = nullptr;
  std::string name_;
  size_t fields_end_ = 0;  // where the last common or event field ends
};

}  // namespace tracekit::tracefs
