#include "tracefs/event_format.hpp"

#include <traceevent/event-parse.h>
#include <traceevent/trace-seq.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::tracefs {

void EventFormat::TepDeleter::operator()(tep_handle* t) const { tep_free(t); }

EventFormat::EventFormat(EventFormat&&) noexcept = default;
EventFormat& EventFormat::operator=(EventFormat&&) noexcept = default;
EventFormat::~EventFormat() = default;

Result<EventFormat> EventFormat::parse(std::string_view text, const std::string& system) {
  EventFormat f;
  f.tep_.reset(tep_alloc());
  if (!f.tep_) return Error{ENOMEM, "cannot allocate a libtraceevent handle", {}, {}};
  tep_set_long_size(f.tep_.get(), sizeof(long));
  tep_set_page_size(f.tep_.get(), static_cast<int>(sysconf(_SC_PAGESIZE)));
  // Records come from this kernel, in the host's byte order (number() reads
  // them so without asking libtraceevent).
  tep_set_file_bigendian(f.tep_.get(), tep_is_bigendian() ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
  // tep_parse_event registers the event with the handle (tep_print_event
  // finds events by the id in the record); the name comes from the text.
  std::string name;
  for (auto line : split(text, '\n'))
    if (line.rfind("name:", 0) == 0) name = std::string(trim(line.substr(5)));
  if (name.empty() || tep_parse_event(f.tep_.get(), text.data(), text.size(), system.c_str()) != 0)
    return Error{0, "cannot parse the event format", system, "libtraceevent rejected it"};
  tep_event* ev = tep_find_event_by_name(f.tep_.get(), system.c_str(), name.c_str());
  if (!ev) return Error{0, "cannot parse the event format", system + ":" + name, {}};
  f.event_ = ev;
  f.name_ = system + ":" + ev->name;
  for (const tep_format_field* list : {ev->format.common_fields, ev->format.fields})
    for (const tep_format_field* fl = list; fl; fl = fl->next)
      f.fields_end_ =
          std::max(f.fields_end_, static_cast<size_t>(fl->offset) + static_cast<size_t>(fl->size));
  return f;
}

Result<EventFormat> EventFormat::load(const std::string& tracing_dir, const std::string& system,
                                      const std::string& event) {
  std::string path = tracing_dir + "/events/" + system + "/" + event + "/format";
  auto text = read_file(path);
  if (!text) {
    int err = text.error().err;
    // Unreadable is not absent: a non-root user gets EACCES for every event.
    if (err == EACCES || err == EPERM) return access_error(path, err);
    return Error{err, "no tracepoint " + system + ":" + event, path,
                 "see " + tracing_dir + "/available_events"};
  }
  return parse(*text, system);
}

int EventFormat::id() const { return event_->id; }

const tep_format_field* EventFormat::field(const char* name) const {
  return tep_find_field(event_, name);
}

std::optional<uint64_t> EventFormat::number(const tep_format_field* f,
                                            std::span<const uint8_t> raw) const {
  if (!f || static_cast<size_t>(f->offset) + static_cast<size_t>(f->size) > raw.size())
    return std::nullopt;
  // What tep_read_number_field does (sizes 1, 2, 4 and 8, zero-extended), by
  // hand: the formats come from the running kernel, in the host's byte
  // order, and this is read for every record of the busiest tools.
  const uint8_t* p = raw.data() + f->offset;
  switch (f->size) {
    case 1:
      return uint64_t{*p};
    case 2: {
      uint16_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case 4: {
      uint32_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    case 8: {
      uint64_t v;
      std::memcpy(&v, p, sizeof v);
      return v;
    }
    default:
      return std::nullopt;
  }
}

std::string_view EventFormat::string(const tep_format_field* f,
                                     std::span<const uint8_t> raw) const {
  if (!f || static_cast<size_t>(f->offset) + static_cast<size_t>(f->size) > raw.size()) return {};
  const char* p = reinterpret_cast<const char*>(raw.data()) + f->offset;
  return std::string_view(p, strnlen(p, static_cast<size_t>(f->size)));
}

std::string EventFormat::print(std::span<const uint8_t> raw) const {
  // tep_print_event reads every field the print format names, wherever the
  // record ends (an empty one: the event type at offset 0 of nullptr).
  if (raw.size() < fields_end_) return {};
  tep_record rec{};
  rec.data = const_cast<uint8_t*>(raw.data());
  rec.size = static_cast<int>(raw.size());
  trace_seq s;
  trace_seq_init(&s);
  tep_print_event(tep_.get(), &s, &rec, "%s", TEP_PRINT_INFO);
  trace_seq_terminate(&s);
  std::string out(s.buffer, s.len);
  trace_seq_destroy(&s);
  return out;
}

}  // namespace tracekit::tracefs
