// bitesize's histogram, as perf-tools' bitesize prints it: a "Kbytes : I/O
// Distribution" header, then one row per bucket, the first open below
// ("-> 0.9"), the last open above ("128.0 ->"), a bar of up to 38 '#'.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tracekit::output {

// The histogram of counts (one per bucket: edges_kb.size() + 1 of them,
// below the first edge first) for bucket edges in Kbytes, ascending. The
// longest bar is 38 '#', the others in proportion, rounded up (a non-zero
// count always shows); no bars when every count is 0. Pure.
std::string bitesize_histogram(const std::vector<double>& edges_kb,
                               const std::vector<uint64_t>& counts);

}  // namespace tracekit::output
