#include "output/folded_input.hpp"

#include "util/strings.hpp"

namespace tracekit::output {

bool parse_folded_line(std::string_view line, std::vector<FlameFrame>* frames, uint64_t* count) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t'))
    line.remove_suffix(1);
  size_t space = line.find_last_of(" \t");
  if (space == std::string_view::npos) return false;
  auto n = parse_int<uint64_t>(line.substr(space + 1));
  if (!n) return false;
  *count = *n;
  std::string_view stack = line.substr(0, space);
  frames->clear();
  size_t at = 0;
  while (at <= stack.size()) {
    size_t semi = stack.find(';', at);
    if (semi == std::string_view::npos) semi = stack.size();
    if (semi > at) frames->push_back({stack.substr(at, semi - at), FrameKind::kUser});
    at = semi + 1;
  }
  if (frames->empty()) return false;
  classify_folded_frames(*frames);
  return true;
}

void classify_folded_frames(std::vector<FlameFrame>& frames) {
  bool kernel = false;
  for (size_t i = 0; i < frames.size(); ++i) {
    FlameFrame& f = frames[i];
    if (f.name == "-" || f.name == "--") {
      f.kind = FrameKind::kDelimiter;
      kernel = true;
    } else if (f.name.size() > 4 && f.name.ends_with("_[k]")) {
      f.name.remove_suffix(4);
      f.kind = FrameKind::kKernel;
    } else if (kernel) {
      f.kind = FrameKind::kKernel;
    } else if (i == 0 && frames.size() > 1) {
      f.kind = FrameKind::kProcess;
    } else {
      f.kind = FrameKind::kUser;
    }
  }
}

}  // namespace tracekit::output
