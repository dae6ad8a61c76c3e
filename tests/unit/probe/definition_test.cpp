// perf-tools' kprobe and uprobe definitions: alias or not, offsets,
// addresses, fetch arguments, and what is refused.
#include "probe/definition.hpp"

#include <gtest/gtest.h>

namespace tracekit::probe {
namespace {

TEST(DefinitionTest, KprobeWithoutAlias) {
  auto d = parse_kprobe_definition("p:do_sys_open");
  ASSERT_TRUE(d) << d.error().str();
  EXPECT_FALSE(d->is_return);
  EXPECT_EQ(d->alias, "");
  EXPECT_EQ(d->function, "do_sys_open");
  EXPECT_EQ(d->fetchargs, "");
  EXPECT_EQ(d->event_name(), "do_sys_open");
}

TEST(DefinitionTest, KprobeSecondWordIsTheFunctionUnlessItIsAnArgument) {
  auto a = parse_kprobe_definition("p:myopen do_sys_open filename=+0(%si):string");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->alias, "myopen");
  EXPECT_EQ(a->function, "do_sys_open");
  EXPECT_EQ(a->fetchargs, "filename=+0(%si):string");
  EXPECT_EQ(a->event_name(), "myopen");
  for (const char* text : {"r:do_sys_open $retval", "r:do_sys_open %ax", "p:vfs_read count=%dx:u64"}) {
    auto d = parse_kprobe_definition(text);
    ASSERT_TRUE(d) << text;
    EXPECT_EQ(d->alias, "") << text;
    EXPECT_NE(d->fetchargs, "") << text;
  }
  auto r = parse_kprobe_definition("r:my_sys_open  do_sys_open   rval=$retval %ax");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->is_return);
  EXPECT_EQ(r->alias, "my_sys_open");
  EXPECT_EQ(r->function, "do_sys_open");
  EXPECT_EQ(r->fetchargs, "rval=$retval %ax");
}

TEST(DefinitionTest, KprobeOffset) {
  auto d = parse_kprobe_definition("p:vfs_read+0x10");
  ASSERT_TRUE(d);
  EXPECT_EQ(d->function, "vfs_read");
  EXPECT_EQ(d->offset, 0x10u);
  EXPECT_EQ(d->event_name(), "vfs_read");
  auto dec = parse_kprobe_definition("p:vfs_read+16");
  ASSERT_TRUE(dec);
  EXPECT_EQ(dec->offset, 16u);
}

TEST(DefinitionTest, KprobeRefusals) {
  for (const char* text : {"", "do_sys_open", "x:do_sys_open", "p:", "p: do_sys_open",
                           "p:vfs_read+zz", "r:vfs_read+4", "p:+4"}) {
    auto d = parse_kprobe_definition(text);
    EXPECT_FALSE(d) << text;
    if (!d) {
      EXPECT_NE(d.error().str().find("invalid probe definition"), std::string::npos);
    }
  }
}

TEST(DefinitionTest, Uprobes) {
  auto a = parse_uprobe_definition("p:bash:readline");
  ASSERT_TRUE(a) << a.error().str();
  EXPECT_EQ(a->target, "bash");
  EXPECT_EQ(a->function, "readline");
  EXPECT_EQ(a->alias, "");
  EXPECT_EQ(a->event_name(), "readline");

  auto r = parse_uprobe_definition("r:bash:readline +0($retval):string");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->is_return);
  EXPECT_EQ(r->fetchargs, "+0($retval):string");

  auto m = parse_uprobe_definition("p:libc:malloc size=%di:u64");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target, "libc");
  EXPECT_EQ(m->function, "malloc");
  EXPECT_EQ(m->fetchargs, "size=%di:u64");

  auto p = parse_uprobe_definition("p:/path/bin:func+0x10");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->target, "/path/bin");
  EXPECT_EQ(p->function, "func");
  EXPECT_EQ(p->offset, 0x10u);

  auto alias = parse_uprobe_definition("p:my /bin/bash:readline %si");
  ASSERT_TRUE(alias);
  EXPECT_EQ(alias->alias, "my");
  EXPECT_EQ(alias->target, "/bin/bash");
  EXPECT_EQ(alias->fetchargs, "%si");

  auto addr = parse_uprobe_definition("p:/lib/x86_64-linux-gnu/libc.so.6:0xbf130");
  ASSERT_TRUE(addr);
  EXPECT_TRUE(addr->is_address);
  EXPECT_EQ(addr->offset, 0xbf130u);
  EXPECT_EQ(addr->function, "");
  EXPECT_EQ(addr->event_name(), "libc_0xbf130");
}

TEST(DefinitionTest, UprobeRefusals) {
  for (const char* text : {"bash:readline", "p:readline", "p:my readline", "p::readline",
                           "p:bash:", "p:bash:0xzz", "r:bash:readline+4"}) {
    EXPECT_FALSE(parse_uprobe_definition(text)) << text;
  }
}

// Older kernels: $argN as registers (before 4.20), ustring as string and
// +u as + (before 5.3); nothing changes where the kernel has them.
TEST(DefinitionTest, FetchargsForOlderKernels) {
  const std::string args = "count=$arg3:u64 file=+0($arg2):ustring u=+u8(%si):u32 $arg10x=%ax";
  auto same = adapt_fetchargs(args, true, true);
  ASSERT_TRUE(same);
  EXPECT_EQ(*same, args);
  auto old = adapt_fetchargs("count=$arg3:u64 file=+0($arg2):ustring u=+u8(%si):u32 x=$arg6",
                             false, false);
  ASSERT_TRUE(old) << old.error().str();
  EXPECT_EQ(*old, "count=%dx:u64 file=+0(%si):string u=+8(%si):u32 x=%r9");
  auto seventh = adapt_fetchargs("x=$arg7", false, true);
  ASSERT_FALSE(seventh);
  EXPECT_NE(seventh.error().message.find("$arg7"), std::string::npos);
  auto ustring_only = adapt_fetchargs("a=$arg1 s=+0(%di):ustringy", true, false);
  ASSERT_TRUE(ustring_only);
  EXPECT_EQ(*ustring_only, "a=$arg1 s=+0(%di):ustringy");
}

}  // namespace
}  // namespace tracekit::probe
