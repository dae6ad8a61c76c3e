// stackcount's report formats per option, rendered from a table of known
// counts: -P shows each stack's process ("    comm [pid]", and comm first in
// folded lines) whether or not -p is given.
#include <gtest/gtest.h>

#include <sstream>

#include "output/print_report.hpp"
#include "report/stack_records.hpp"
#include "stackcount/stackcount.hpp"

namespace tracekit::stackcount {
namespace {

struct Case {
  const char* name;
  bool per_pid;
  std::optional<int> pid;
  bool folded;
  const char* expected;
};

// One user stack of two frames no process maps (they print "[unknown]"),
// counted 3 times for process 4242 named "work".
std::string render(const Case& c) {
  Options o;
  o.per_pid = c.per_pid;
  o.pid = c.pid;
  o.folded = c.folded;
  o.user_only = true;
  aggregate::StackCounts counts(16, 16);
  const uint64_t user[] = {0x10, 0x20};
  counts.add(c.per_pid ? 4242 : 0, c.per_pid ? "work" : "", std::nullopt,
             std::span<const uint64_t>(user), 3);
  std::ostringstream out, err;
  output::print_stack_report(out, err, counts, nullptr,
                             report_options(o, /*kernel_stacks=*/false, /*user_stacks=*/true));
  EXPECT_EQ(err.str(), "") << c.name;
  return out.str();
}

TEST(StackcountReportOptionsTest, ProcessShownWithPerPidOnly) {
  const Case cases[] = {
      {"plain", false, std::nullopt, false, "  [unknown]\n  [unknown]\n    3\n\n"},
      {"-P", true, std::nullopt, false, "  [unknown]\n  [unknown]\n    work [4242]\n    3\n\n"},
      {"-P -p", true, 4242, false, "  [unknown]\n  [unknown]\n    work [4242]\n    3\n\n"},
      {"-p", false, 4242, false, "  [unknown]\n  [unknown]\n    3\n\n"},
      {"-f", false, std::nullopt, true, "[unknown];[unknown] 3\n"},
      {"-P -f", true, std::nullopt, true, "work;[unknown];[unknown] 3\n"},
      {"-P -p -f", true, 4242, true, "work;[unknown];[unknown] 3\n"},
  };
  for (const Case& c : cases) EXPECT_EQ(render(c), c.expected) << c.name;
}

}  // namespace
}  // namespace tracekit::stackcount
