// How this works: each merged record becomes a list of (name, file) keys,
// root first (folded_frames, the mapping's file looked up); the lists are
// sorted and equal neighbours summed, and only then are frames numbered, in
// order of first use, so the output is the same whatever order the records
// came in. The JSON is written by hand: its shape is fixed and small.
#include "output/speedscope.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "output/stack_report.hpp"
#include "util/json.hpp"

namespace tracekit::output {

namespace {

using FrameKey = std::pair<std::string, std::string>;  // name, file ("": unknown)

struct Sample {
  std::vector<FrameKey> stack;  // root first
  uint64_t weight = 0;
};

std::string file_of(const FoldedFrame& f, const report::Report& r) {
  if (f.frame == nullptr || f.frame->mapping < 0) return "";
  auto i = static_cast<size_t>(f.frame->mapping);
  return i < r.mappings.size() ? r.mappings[i].file : "";
}

// The unit speedscope is told, and how many of it one unit of value is.
std::pair<const char*, uint64_t> weight_unit(const report::Report& r) {
  switch (r.unit) {
    case report::Unit::kSamples:
      if (r.period_ns > 0) return {"nanoseconds", r.period_ns};
      return {"none", 1};
    case report::Unit::kMicroseconds: return {"microseconds", 1};
    case report::Unit::kEvents: return {"none", 1};
  }
  return {"none", 1};
}

}  // namespace

void write_speedscope(std::ostream& out, const report::Report& r) {
  auto [unit, scale] = weight_unit(r);

  std::vector<report::Record> records = r.records;
  merge_same_text(records, r.frames, r.style);
  std::vector<Sample> samples;
  samples.reserve(records.size());
  for (const report::Record& rec : records) {
    Sample s;
    for (const FoldedFrame& f : folded_frames(rec, r.frames, r.style))
      s.stack.emplace_back(f.text, file_of(f, r));
    s.weight = rec.value * scale;
    samples.push_back(std::move(s));
  }
  std::stable_sort(samples.begin(), samples.end(),
                   [](const Sample& a, const Sample& b) { return a.stack < b.stack; });
  std::vector<Sample> merged;
  for (Sample& s : samples) {
    if (!merged.empty() && merged.back().stack == s.stack)
      merged.back().weight += s.weight;
    else
      merged.push_back(std::move(s));
  }

  std::map<FrameKey, size_t> index;
  std::vector<const FrameKey*> frames;  // by index
  std::vector<std::vector<size_t>> stacks;
  uint64_t total = 0;
  for (const Sample& s : merged) {
    std::vector<size_t>& ids = stacks.emplace_back();
    for (const FrameKey& key : s.stack) {
      auto [it, added] = index.emplace(key, frames.size());
      if (added) frames.push_back(&it->first);
      ids.push_back(it->second);
    }
    total += s.weight;
  }

  std::string name = json_string(r.command);
  std::string text;
  text += "{\n";
  text += "  \"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n";
  text += "  \"exporter\": \"tracekit\",\n";
  text += "  \"name\": " + name + ",\n";
  text += "  \"activeProfileIndex\": 0,\n";
  text += "  \"shared\": {\n    \"frames\": [";
  for (size_t i = 0; i < frames.size(); ++i) {
    text += i ? ",\n      {\"name\": " : "\n      {\"name\": ";
    append_json_string(text, frames[i]->first);
    if (!frames[i]->second.empty()) {
      text += ", \"file\": ";
      append_json_string(text, frames[i]->second);
    }
    text += '}';
  }
  text += frames.empty() ? "]\n  },\n" : "\n    ]\n  },\n";
  text += "  \"profiles\": [\n    {\n";
  text += "      \"type\": \"sampled\",\n";
  text += "      \"name\": " + name + ",\n";
  text += std::string("      \"unit\": \"") + unit + "\",\n";
  text += "      \"startValue\": 0,\n";
  text += "      \"endValue\": " + std::to_string(total) + ",\n";
  text += "      \"samples\": [";
  for (size_t i = 0; i < stacks.size(); ++i) {
    text += i ? ",\n        [" : "\n        [";
    for (size_t k = 0; k < stacks[i].size(); ++k)
      text += (k ? ", " : "") + std::to_string(stacks[i][k]);
    text += ']';
  }
  text += stacks.empty() ? "],\n" : "\n      ],\n";
  text += "      \"weights\": [";
  for (size_t i = 0; i < merged.size(); ++i)
    text += (i ? ", " : "") + std::to_string(merged[i].weight);
  text += "]\n    }\n  ]\n}\n";
  out << text;
}

}  // namespace tracekit::output
