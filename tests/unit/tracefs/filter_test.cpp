// Event filters in the kernel's syntax.
#include "tracefs/filter.hpp"

#include <gtest/gtest.h>

namespace tracekit::tracefs {
namespace {

TEST(FilterTest, ThreadFilter) {
  EXPECT_EQ(equals_any("common_pid", {}), "");
  EXPECT_EQ(equals_any("common_pid", {42}), "common_pid == 42");
  EXPECT_EQ(equals_any("prev_pid", {4, 5}), "prev_pid == 4 || prev_pid == 5");
}

TEST(FilterTest, JoinFilters) {
  EXPECT_EQ(join_filters("", ""), "");
  EXPECT_EQ(join_filters("common_pid == 4", ""), "common_pid == 4");
  EXPECT_EQ(join_filters("", "count < 3"), "count < 3");
  EXPECT_EQ(join_filters("common_pid == 4 || common_pid == 5", "count < 3 || fd == 0"),
            "(common_pid == 4 || common_pid == 5) && (count < 3 || fd == 0)");
}

}  // namespace
}  // namespace tracekit::tracefs
