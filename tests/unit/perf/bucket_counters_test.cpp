// perf::bucket_filters: one filter per bucket, below the first edge first.
#include "perf/bucket_counters.hpp"

#include <gtest/gtest.h>

namespace tracekit::perf {
namespace {

using Filters = std::vector<std::string>;

TEST(BucketFilters, OnePerBucketBelowTheFirstEdgeFirst) {
  EXPECT_EQ(bucket_filters("count", {0, 1, 4}), (Filters{"count < 0", "count >= 0 && count < 1",
                                                         "count >= 1 && count < 4", "count >= 4"}));
  EXPECT_EQ(bucket_filters("ret", {10}), (Filters{"ret < 10", "ret >= 10"}));
  EXPECT_EQ(bucket_filters("ret", {-5, 0}),
            (Filters{"ret < -5", "ret >= -5 && ret < 0", "ret >= 0"}));
}

TEST(BucketFilters, JoinedWithAnotherFilter) {
  EXPECT_EQ(bucket_filters("len", {64}, "common_pid == 7"),
            (Filters{"(len < 64) && (common_pid == 7)", "(len >= 64) && (common_pid == 7)"}));
}

}  // namespace
}  // namespace tracekit::perf
