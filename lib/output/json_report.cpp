// How this works: the records are merged as the text output merges them
// (each group shown by its largest record) and sorted (value descending, then pid, comm and frame texts, so equal values
// do not leave the order to the input's); each is then written as one object,
// a frame a line. The layout is fixed, so the JSON is written by hand.
#include "output/json_report.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <tuple>
#include <vector>

#include "output/stack_report.hpp"
#include "util/json.hpp"

namespace tracekit::output {

namespace {

const char* unit_word(report::Unit u) {
  switch (u) {
    case report::Unit::kSamples: return "samples";
    case report::Unit::kMicroseconds: return "microseconds";
    case report::Unit::kEvents: return "events";
  }
  return "";
}

// "2026-11-18T11:06:40.000000000Z" for ns since the epoch.
std::string iso8601_utc(int64_t unix_ns) {
  // Floor division, so that times before 1970 keep a fraction in [0, 1e9).
  int64_t sec = unix_ns / 1000000000;
  int64_t ns = unix_ns % 1000000000;
  if (ns < 0) {
    ns += 1000000000;
    --sec;
  }
  time_t t = static_cast<time_t>(sec);
  tm utc{};
  gmtime_r(&t, &utc);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z",
                utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                utc.tm_sec, ns);
  return buf;
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%" PRIx64, v);
  return buf;
}

// The frame texts, the last tie-break of the order.
std::vector<std::string> texts(const report::Record& r, const report::FrameTable& frames,
                               const report::Style& style) {
  std::vector<std::string> out;
  for (const FoldedFrame& f : folded_frames(r, frames, style)) out.push_back(f.text);
  return out;
}

// Kernel then user addresses, leaf first: the last tie-break of which record
// shows a merged stack.
std::vector<uint64_t> addresses(const report::Record& r, const report::FrameTable& frames) {
  std::vector<uint64_t> out;
  for (const report::Frame& f : frames.frames(r.kernel)) out.push_back(f.addr);
  out.push_back(0);  // kernel {a} and user {} differ from kernel {} and user {a}
  for (const report::Frame& f : frames.frames(r.user)) out.push_back(f.addr);
  return out;
}

void write_side(std::string& text, const report::Stack& side, const report::Report& r) {
  switch (side.state) {
    case report::StackState::kAbsent:
      text += "null";
      return;
    case report::StackState::kMissed:
      text += "{\"missed\": true, \"frames\": []}";
      return;
    case report::StackState::kPresent:
      break;
  }
  text += "{\n        \"missed\": false,\n        \"frames\": [";
  bool first = true;
  for (const report::Frame& f : r.frames.frames(side)) {
    text += first ? "\n          {\"name\": " : ",\n          {\"name\": ";
    first = false;
    if (f.name.empty())
      text += "null";
    else
      append_json_string(text, f.name);
    text += ", \"address\": \"" + hex(f.addr) + "\", \"offset\": ";
    text += f.name.empty() ? "null" : std::to_string(f.offset);
    text += ", \"file\": ";
    auto m = static_cast<size_t>(f.mapping);
    if (f.mapping >= 0 && m < r.mappings.size() && !r.mappings[m].file.empty())
      append_json_string(text, r.mappings[m].file);
    else
      text += "null";
    text += '}';
  }
  text += first ? "]\n      }" : "\n        ]\n      }";
}

}  // namespace

void write_json(std::ostream& out, const report::Report& r) {
  // Largest first before merging, so that each merged stack shows the
  // addresses of its largest record (the lowest ones among equals) whatever
  // order the records came in.
  std::vector<report::Record> records = r.records;
  std::sort(records.begin(), records.end(), [&r](const report::Record& a, const report::Record& b) {
    if (a.value != b.value) return a.value > b.value;
    return std::tie(a.pid, a.comm) < std::tie(b.pid, b.comm) ||
           (std::tie(a.pid, a.comm) == std::tie(b.pid, b.comm) &&
            addresses(a, r.frames) < addresses(b, r.frames));
  });
  merge_same_text(records, r.frames, r.style);
  struct Entry {
    const report::Record* record;
    std::vector<std::string> texts;
  };
  std::vector<Entry> entries;
  entries.reserve(records.size());
  uint64_t total = 0;
  for (const report::Record& rec : records) {
    entries.push_back({&rec, texts(rec, r.frames, r.style)});
    total += rec.value;
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    // Largest value first; pid, comm and frames ascending.
    return std::tie(b.record->value, a.record->pid, a.record->comm, a.texts) <
           std::tie(a.record->value, b.record->pid, b.record->comm, b.texts);
  });

  const report::Totals& t = r.totals;
  std::string text;
  text += "{\n";
  text += "  \"format\": \"tracekit-stacks\",\n";
  text += "  \"version\": 1,\n";
  text += "  \"tool\": " + json_string(r.tool) + ",\n";
  text += "  \"command\": " + json_string(r.command) + ",\n";
  text += "  \"host\": " + json_string(r.host) + ",\n";
  text += std::string("  \"unit\": \"") + unit_word(r.unit) + "\",\n";
  text += "  \"period_ns\": " + std::to_string(r.period_ns) + ",\n";
  text += "  \"start_unix_ns\": " + std::to_string(r.start_unix_ns) + ",\n";
  text += "  \"start_time\": \"" + iso8601_utc(r.start_unix_ns) + "\",\n";
  text += "  \"duration_ns\": " + std::to_string(r.duration_ns) + ",\n";
  text += "  \"totals\": {\"lost_events\": " + std::to_string(t.lost_events) +
          ", \"missed_stacks\": " + std::to_string(t.missed_stacks) +
          ", \"dropped\": " + std::to_string(t.dropped) +
          ", \"truncated_stacks\": " + std::to_string(t.truncated_stacks) + "},\n";
  text += "  \"total_value\": " + std::to_string(total) + ",\n";
  text += "  \"frame_order\": \"leaf_first\",\n";
  text += "  \"stacks\": [";
  bool first = true;
  for (const Entry& e : entries) {
    const report::Record& rec = *e.record;
    text += first ? "\n    {\n" : ",\n    {\n";
    first = false;
    text += "      \"pid\": " + std::to_string(rec.pid) + ",\n";
    text += "      \"comm\": " + json_string(rec.comm) + ",\n";
    text += "      \"value\": " + std::to_string(rec.value) + ",\n";
    text += "      \"kernel\": ";
    write_side(text, rec.kernel, r);
    text += ",\n      \"user\": ";
    write_side(text, rec.user, r);
    text += "\n    }";
  }
  text += first ? "]\n}\n" : "\n  ]\n}\n";
  out << text;
}

}  // namespace tracekit::output
