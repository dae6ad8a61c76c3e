// ProbeGroup against a fake tracefs tree: which file a probe goes to, the
// exact definition and removal lines, event names.
#include "tracefs/dynamic_events.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <regex>

#include "fake_tree.hpp"
#include "tracefs/instance.hpp"

namespace tracekit::tracefs {
namespace {

namespace fs = std::filesystem;

TEST(TracefsProbeGroupTest, NamesAreOursAndDistinct) {
  FakeTree t;
  auto a = ProbeGroup::open(t.dir());
  auto b = ProbeGroup::open(t.dir());
  ASSERT_TRUE(a && b);
  std::regex ours("tracekit_" + std::to_string(getpid()) + "(_[0-9]+)?");
  EXPECT_TRUE(std::regex_match(a->name(), ours)) << a->name();
  EXPECT_TRUE(std::regex_match(b->name(), ours)) << b->name();
  EXPECT_NE(a->name(), b->name());
}

TEST(TracefsProbeGroupTest, SkipsAGroupThatExists) {
  FakeTree t;
  auto a = ProbeGroup::open(t.dir());
  ASSERT_TRUE(a);
  std::string base = "tracekit_" + std::to_string(getpid());
  int n = a->name() == base ? 0 : std::stoi(a->name().substr(base.size() + 1));
  // A dead run with our pid left events of the next group name.
  fs::create_directories(t.dir() + "/events/" + base + "_" + std::to_string(n + 1));
  auto b = ProbeGroup::open(t.dir());
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name(), base + "_" + std::to_string(n + 2));
}

TEST(TracefsProbeGroupTest, OpenNeedsEventsDir) {
  auto r = ProbeGroup::open("/nonexistent/tracing");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().err, ENOENT);
}

// Event probes go to dynamic_events ("e:", the attached event as
// SYSTEM.EVENT), and need it.
TEST(TracefsProbeGroupTest, EventProbes) {
  FakeTree t;
  std::string g;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    auto none = r->add_eprobe("syscalls", "sys_enter_openat", "", "");
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("dynamic_events"), std::string::npos);
  }
  t.put("dynamic_events", "");
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    g = r->name();
    auto e = r->add_eprobe("syscalls", "sys_enter_openat", "c0_openat",
                           "filename=+0($filename):ustring");
    ASSERT_TRUE(e) << e.error().str();
    EXPECT_EQ(*e, "c0_openat");
  }
  EXPECT_EQ(t.get("dynamic_events"), "e:" + g +
                                         "/c0_openat syscalls.sys_enter_openat "
                                         "filename=+0($filename):ustring\n-:" +
                                         g + "/c0_openat\n");
}

TEST(TracefsProbeGroupTest, UprobesGoToUprobeEventsAndAreRemovedNewestFirst) {
  FakeTree t;
  t.put("uprobe_events", "");
  std::string g;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    g = r->name();
    EXPECT_TRUE(r->uprobes_supported());
    EXPECT_FALSE(r->kprobes_supported());
    auto e1 = r->add_uprobe("/bin/true", 0x2490, false, "my-func.cold");
    auto e2 = r->add_uprobe("/bin/true", 0x24a0, false, "my-func.cold");
    auto e3 = r->add_uprobe("/usr/lib/x86_64-linux-gnu/libc.so.6", 0x1f00, true, "", "+0(%di):u64");
    ASSERT_TRUE(e1 && e2 && e3) << (e1 ? "" : e1.error().str());
    EXPECT_EQ(*e1, "my_func_cold");
    EXPECT_EQ(*e2, "my_func_cold_1");
    EXPECT_EQ(*e3, "u_libc_so_6_1f00");
    EXPECT_EQ(r->events(),
              (std::vector<std::string>{"my_func_cold", "my_func_cold_1", "u_libc_so_6_1f00"}));
  }
  EXPECT_EQ(t.get("uprobe_events"),
            "p:" + g +
                "/my_func_cold /bin/true:0x2490\n"
                "p:" +
                g +
                "/my_func_cold_1 /bin/true:0x24a0\n"
                "r:" +
                g +
                "/u_libc_so_6_1f00 /usr/lib/x86_64-linux-gnu/libc.so.6:0x1f00 +0(%di):u64\n"
                "-:" +
                g +
                "/u_libc_so_6_1f00\n"
                "-:" +
                g +
                "/my_func_cold_1\n"
                "-:" +
                g + "/my_func_cold\n");
}

TEST(TracefsProbeGroupTest, DynamicEventsPreferred) {
  FakeTree t;
  t.put("uprobe_events", "");
  t.put("kprobe_events", "");
  t.put("dynamic_events", "");
  std::string g;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    g = r->name();
    EXPECT_TRUE(r->kprobes_supported());
    ASSERT_TRUE(r->add_uprobe("/bin/true", 16, false, "main"));
    ASSERT_TRUE(r->add_kprobe("vfs_read", false));
  }
  EXPECT_EQ(t.get("dynamic_events"), "p:" + g +
                                         "/main /bin/true:0x10\n"
                                         "p:" +
                                         g +
                                         "/p_vfs_read vfs_read\n"
                                         "-:" +
                                         g +
                                         "/p_vfs_read\n"
                                         "-:" +
                                         g + "/main\n");
  EXPECT_EQ(t.get("uprobe_events"), "");
  EXPECT_EQ(t.get("kprobe_events"), "");
}

TEST(TracefsProbeGroupTest, KprobesGoToKprobeEvents) {
  FakeTree t;
  t.put("kprobe_events", "");
  std::string g;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    g = r->name();
    auto a = r->add_kprobe("vfs_read", false);
    auto b = r->add_kprobe("vfs_read", true, "$retval");
    auto c = r->add_kprobe("do_sys_open.isra.0", false);
    ASSERT_TRUE(a && b && c);
    EXPECT_EQ(*a, "p_vfs_read");
    EXPECT_EQ(*b, "r_vfs_read");
    EXPECT_EQ(*c, "p_do_sys_open_isra_0");
    auto bad = r->add_kprobe("two words", false);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().err, EINVAL);
  }
  EXPECT_EQ(t.get("kprobe_events"), "p:" + g +
                                        "/p_vfs_read vfs_read\n"
                                        "r:" +
                                        g +
                                        "/r_vfs_read vfs_read $retval\n"
                                        "p:" +
                                        g +
                                        "/p_do_sys_open_isra_0 do_sys_open.isra.0\n"
                                        "-:" +
                                        g +
                                        "/p_do_sys_open_isra_0\n"
                                        "-:" +
                                        g +
                                        "/r_vfs_read\n"
                                        "-:" +
                                        g + "/p_vfs_read\n");
}

TEST(TracefsProbeGroupTest, NoKprobesIsAClearError) {
  FakeTree t;
  t.put("uprobe_events", "");
  t.put("dynamic_events", "");
  auto r = ProbeGroup::open(t.dir());
  ASSERT_TRUE(r);
  auto k = r->add_kprobe("vfs_read", false);
  ASSERT_FALSE(k);
  EXPECT_EQ(k.error().message,
            "this kernel has no kprobes (CONFIG_KPROBES is off): kprobe_events is missing");
  EXPECT_EQ(k.error().str().rfind(k.error().message, 0), 0u);
  EXPECT_EQ(t.get("dynamic_events"), "");
}

TEST(TracefsProbeGroupTest, NoUprobesAndBadPaths) {
  FakeTree t;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    auto u = r->add_uprobe("/bin/true", 0, false, "x");
    ASSERT_FALSE(u);
    EXPECT_NE(u.error().message.find("uprobe_events is missing"), std::string::npos);
  }
  t.put("uprobe_events", "");
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    auto u = r->add_uprobe("/tmp/my prog", 0, false, "x");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().err, EINVAL);
  }
  EXPECT_EQ(t.get("uprobe_events"), "");
}

TEST(TracefsProbeGroupTest, FailedAddIsNotRemoved) {
  FakeTree t;
  fs::create_directories(t.dir() + "/uprobe_events");  // writes fail: EISDIR
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    auto u = r->add_uprobe("/bin/true", 0, false, "x");
    ASSERT_FALSE(u);
    EXPECT_EQ(u.error().err, EISDIR);
    EXPECT_TRUE(r->events().empty());
  }
  ASSERT_EQ(t.log.size(), 1u);  // the add, and no removal
  EXPECT_EQ(t.log[0].rfind("append " + t.dir() + "/uprobe_events p:", 0), 0u) << t.log[0];
}

TEST(TracefsProbeGroupTest, MovedFromGroupRemovesNothing) {
  FakeTree t;
  t.put("uprobe_events", "");
  std::string g;
  {
    auto r = ProbeGroup::open(t.dir());
    ASSERT_TRUE(r);
    ASSERT_TRUE(r->add_uprobe("/bin/true", 1, false, "a"));
    ProbeGroup moved(std::move(*r));
    g = moved.name();
    EXPECT_EQ(moved.events().size(), 1u);
  }
  EXPECT_EQ(t.get("uprobe_events"), "p:" + g + "/a /bin/true:0x1\n-:" + g + "/a\n");
}

TEST(TracefsProbeNameTest, Table) {
  struct Case {
    std::string hint, want;
  } cases[] = {
      {"main", "main"},
      {"my-func.cold", "my_func_cold"},
      {"_ZN3foo3barEv", "_ZN3foo3barEv"},
      {"operator new(unsigned long)", "operator_new_unsigned_long_"},
      {"9lives", "_9lives"},
      {"", "probe"},
      {std::string(60, 'a'), std::string(48, 'a')},
  };
  for (const auto& c : cases) EXPECT_EQ(probe_name(c.hint), c.want) << c.hint;
}

}  // namespace
}  // namespace tracekit::tracefs
