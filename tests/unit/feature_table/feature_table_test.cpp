// The table of kernel features, and TRACEKIT_KERNEL_FEATURES's syntax.
#include "feature_table/feature_table.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string_view>

namespace tracekit::kernel {
namespace {

using F = Feature;

TEST(FeatureTableTest, ForcedSpec) {
  auto ok = parse_forced("-context_switch, -instances,,-kprobes");
  ASSERT_TRUE(ok) << ok.error().str();
  EXPECT_EQ(*ok, (std::vector<F>{F::kContextSwitch, F::kInstances, F::kKprobes}));
  EXPECT_TRUE(parse_forced("")->empty());
  auto unknown = parse_forced("-no_such_feature");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("no feature named \"no_such_feature\""),
            std::string::npos);
  EXPECT_FALSE(parse_forced("instances"));  // not "-NAME"
}

TEST(FeatureTableTest, TableNamesAreUniqueAndComplete) {
  std::set<std::string_view> names;
  for (const auto& i : feature_table()) {
    EXPECT_TRUE(names.insert(i.name).second) << i.name;
    EXPECT_EQ(&info(i.id), &i);
    EXPECT_EQ(feature_named(i.name), i.id);
    EXPECT_FALSE(i.what.empty());
    EXPECT_FALSE(i.provided_by.empty());
  }
  EXPECT_EQ(names.size(), static_cast<size_t>(F::kCount));
}

}  // namespace
}  // namespace tracekit::kernel
