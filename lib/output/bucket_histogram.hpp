// perf-tools' histogram of counts in buckets, as bitesize and
// perf-stat-hist print it: a header row ("Range : Count Distribution"),
// then one row per bucket, "   FROM -> TO: COUNT |BAR|", the bar up to 38
// '#' long.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tracekit::output {

// A bucket: its range as printed ("" for an open end), and its count.
struct BucketRow {
  std::string from, to;
  uint64_t count = 0;
};

// The header "            %-15s: %-8s Distribution" of the two titles,
// then each row as "   %10s -> %-10s: %-8llu |%-38s|". The longest bar
// is 38 '#', the others in proportion, rounded up (a non-zero count always
// shows: perf-tools' star()); no bars when every count is 0. Pure.
std::string bucket_histogram(std::string_view range_title, std::string_view count_title,
                             const std::vector<BucketRow>& rows);

}  // namespace tracekit::output
