#include "probe/spec.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tracekit::probe {
namespace {

struct Valid {
  const char* text;
  Kind kind;
  const char* library;
  const char* category;
  const char* pattern;
};

TEST(ProbeSpecTest, ParsesValidSpecs) {
  const Valid cases[] = {
      {"vfs_read", Kind::kKernel, "", "", "vfs_read"},
      {"tcp_send*", Kind::kKernel, "", "", "tcp_send*"},
      {"p::vfs_read", Kind::kKernel, "", "", "vfs_read"},
      {"::vfs_read", Kind::kKernel, "", "", "vfs_read"},  // trace: empty type is p
      {":vfs_read", Kind::kKernel, "", "", "vfs_read"},   // stackcount: ["p", "", func]
      {"r::vfs_read", Kind::kKernelReturn, "", "", "vfs_read"},
      {"t:sched:sched_switch", Kind::kTracepoint, "", "sched", "sched_switch"},
      {"t:sched*:*", Kind::kTracepoint, "", "sched*", "*"},
      {"t:*:sys_enter_get*", Kind::kTracepoint, "", "*", "sys_enter_get*"},
      {"c:malloc", Kind::kUser, "c", "", "malloc"},
      {"p:c:malloc", Kind::kUser, "c", "", "malloc"},
      {"pthread:pthread_mutex_lock", Kind::kUser, "pthread", "", "pthread_mutex_lock"},
      {"/bin/bash:readline", Kind::kUser, "/bin/bash", "", "readline"},
      {"./test:read*", Kind::kUser, "./test", "", "read*"},
      {"r:c:malloc", Kind::kUserReturn, "c", "", "malloc"},
      {"r:/bin/bash:readline", Kind::kUserReturn, "/bin/bash", "", "readline"},
      {"u:node:gc*", Kind::kUsdt, "node", "", "gc*"},
      {"u:/usr/bin/python3:function__entry", Kind::kUsdt, "/usr/bin/python3", "",
       "function__entry"},
      {"u:node:node:gc__start", Kind::kUsdt, "node", "", "node:gc__start"},  // with provider
  };
  for (const Valid& c : cases) {
    SCOPED_TRACE(c.text);
    auto s = parse_spec(c.text);
    ASSERT_TRUE(s.ok()) << s.error().str();
    EXPECT_EQ(s->kind, c.kind);
    EXPECT_EQ(s->library, c.library);
    EXPECT_EQ(s->category, c.category);
    EXPECT_EQ(s->pattern, c.pattern);
    EXPECT_EQ(s->text, c.text);
  }
}

struct Invalid {
  const char* text;
  const char* message;
};

TEST(ProbeSpecTest, RejectsMalformedSpecsSayingWhy) {
  const Invalid cases[] = {
      {"", "bad event spec \"\": empty"},
      {"t:sched", "bad event spec \"t:sched\": tracepoint spec needs \"t:category:event\""},
      {"t:sched:", "bad event spec \"t:sched:\": tracepoint spec needs \"t:category:event\""},
      {"t::sched_switch",
       "bad event spec \"t::sched_switch\": tracepoint spec needs \"t:category:event\""},
      {"x:foo:bar", "bad event spec \"x:foo:bar\": unknown probe type \"x\""},
      {"kprobe:foo:bar", "bad event spec \"kprobe:foo:bar\": unknown probe type \"kprobe\""},
      {"c:", "bad event spec \"c:\": no function name"},
      {"p::", "bad event spec \"p::\": no function name"},
      {"r:c:", "bad event spec \"r:c:\": no function name"},
      {"::", "bad event spec \"::\": no function name"},
      {"p:vfs_read",
       "bad event spec \"p:vfs_read\": entry probe spec needs \"p::func\" (kernel) or "
       "\"p:lib:func\" (user)"},
      {"r:vfs_read",
       "bad event spec \"r:vfs_read\": return probe spec needs \"r::func\" (kernel) or "
       "\"r:lib:func\" (user)"},
      {"u:node", "bad event spec \"u:node\": USDT spec needs \"u:lib:probe\""},
      {"u::gc", "bad event spec \"u::gc\": USDT spec needs \"u:lib:probe\""},
      {"u:node:", "bad event spec \"u:node:\": USDT spec needs \"u:lib:probe\""},
      {"u:a:b:c:d", "bad event spec \"u:a:b:c:d\": USDT spec needs \"u:lib:probe\""},
      {"p:a:b:c", "bad event spec \"p:a:b:c\": too many ':'-separated parts"},
      {"t:a:b:c", "bad event spec \"t:a:b:c\": too many ':'-separated parts"},
  };
  for (const Invalid& c : cases) {
    SCOPED_TRACE(c.text);
    auto s = parse_spec(c.text);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().message, c.message);
    EXPECT_EQ(s.error().err, 0);
  }
}

TEST(ProbeSpecTest, UnknownTypeListsTheTypes) {
  auto s = parse_spec("x:foo:bar");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().hint, "types: p (entry), r (return), t (tracepoint), u (USDT)");
  EXPECT_EQ(s.error().str(),
            "bad event spec \"x:foo:bar\": unknown probe type \"x\" (types: p (entry), r (return), "
            "t (tracepoint), u (USDT))");
}

}  // namespace
}  // namespace tracekit::probe
