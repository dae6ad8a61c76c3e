// Reading folded stacks ("comm;root;...;leaf 123", one stack a line), as
// flamegraph.pl reads them: ours (-f), perf's stackcollapse-perf.pl output,
// bcc's -f. The count is the number after the line's LAST space (names may
// hold spaces); frames are split on ';'.
//
// What each frame is (its colour in the flame graph):
//   - "-" or "--": the delimiter between user and kernel frames (ours and
//     bcc's -d); every frame after it is a kernel frame;
//   - a frame ending "_[k]" (ours and bcc's -a, perf's --all annotated
//     output) is a kernel frame, shown without the suffix, as flamegraph.pl
//     shows it; other annotations ("_[j]", "_[i]") stay in the name;
//   - the first frame is the process (comm, as ours, bcc's and perf's
//     collapsed output start) when more frames follow it and it is neither
//     of the above; input that does not start with the process (stackcount
//     -f without -P) then shows its root frame in the process colour;
//   - every other frame is a user frame.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "output/flamegraph.hpp"

namespace tracekit::output {

// Parses one line (without its newline; a trailing '\r' and blanks are
// ignored) into frames (views into line, root first) and its count. False
// when the line has no count after its last space, a count that is not a
// whole non-negative decimal number (a fractional count is rejected, not
// rounded), or no frame; frames and count are then unspecified. Empty
// frames (";;") are skipped.
bool parse_folded_line(std::string_view line, std::vector<FlameFrame>* frames, uint64_t* count);

// The kinds above, for frames as split from one line (names still with
// their "_[k]"): strips the suffixes and sets each frame's kind.
void classify_folded_frames(std::vector<FlameFrame>& frames);

}  // namespace tracekit::output
