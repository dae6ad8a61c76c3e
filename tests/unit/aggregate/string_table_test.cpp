#include "aggregate/string_table.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace tracekit::aggregate {
namespace {

struct StringCase {
  std::string name;
  std::vector<std::string> strings;  // interned in order
  std::vector<uint32_t> want;        // the id each intern() returns
  size_t want_size;
};

class AggregateStringTableInternTest : public testing::TestWithParam<StringCase> {};

TEST_P(AggregateStringTableInternTest, Ids) {
  const StringCase& c = GetParam();
  StringTable t;
  std::vector<uint32_t> ids;
  for (const auto& s : c.strings) ids.push_back(t.intern(s));
  EXPECT_EQ(ids, c.want);
  EXPECT_EQ(t.size(), c.want_size);
  for (size_t i = 0; i < c.strings.size(); ++i) EXPECT_EQ(t.str(ids[i]), c.strings[i]);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AggregateStringTableInternTest,
    testing::Values(
        StringCase{"DenseFromZero", {"bash", "sshd", "kworker/0:1"}, {0, 1, 2}, 3},
        StringCase{"SameStringSameId", {"bash", "sshd", "bash", "sshd"}, {0, 1, 0, 1}, 2},
        StringCase{"EmptyStringIsAString", {"", "a", ""}, {0, 1, 0}, 2},
        StringCase{"CaseAndPrefixMatter", {"Bash", "bash", "bas", "bash "}, {0, 1, 2, 3}, 4},
        StringCase{
            "EmbeddedNul", {std::string("a\0b", 3), "a", std::string("a\0b", 3)}, {0, 1, 0}, 2}),
    [](const testing::TestParamInfo<StringCase>& info) { return info.param.name; });

TEST(AggregateStringTableTest, ViewsStayValidAcrossManyInserts) {
  StringTable t;
  // Short strings sit in std::string's inline buffer: the case where a
  // moving container would invalidate views.
  const uint32_t first_short = t.intern("a");
  const uint32_t first_long = t.intern(std::string(100, 'x'));
  const std::string_view short_view = t.str(first_short);
  const std::string_view long_view = t.str(first_long);
  for (int i = 0; i < 100000; ++i) {
    ASSERT_EQ(t.intern("comm-" + std::to_string(i)), static_cast<uint32_t>(i + 2));
  }
  EXPECT_EQ(short_view, "a");
  EXPECT_EQ(long_view, std::string(100, 'x'));
  EXPECT_EQ(short_view.data(), t.str(first_short).data());
  EXPECT_EQ(t.intern("a"), first_short);
  EXPECT_EQ(t.size(), 100002u);
  for (int i = 0; i < 100000; i += 997) {
    EXPECT_EQ(t.str(static_cast<uint32_t>(i + 2)), "comm-" + std::to_string(i));
  }
}

TEST(AggregateStringTableTest, InternCopiesItsArgument) {
  StringTable t;
  std::string s = "cron";
  const uint32_t id = t.intern(s);
  s = "XXXX";
  EXPECT_EQ(t.str(id), "cron");
  EXPECT_EQ(t.intern("cron"), id);
}

}  // namespace
}  // namespace tracekit::aggregate
