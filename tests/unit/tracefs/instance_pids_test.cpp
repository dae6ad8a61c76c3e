// Instance's pid list verbs (set_event_pid, set_ftrace_pid) and feature
// probe, against a fake tracefs tree.
#include <gtest/gtest.h>

#include "fake_tree.hpp"
#include "tracefs/instance.hpp"

namespace tracekit::tracefs {
namespace {

using Lines = std::vector<std::string>;

TEST(TracefsInstancePidsTest, SetAddThenClearedAtTheEnd) {
  FakeTree t;
  std::string rel;
  testing::internal::CaptureStderr();
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r) << r.error().str();
    rel = "instances/" + r->name();
    t.put(rel + "/set_event_pid", "");
    ASSERT_TRUE(r->set_event_pid({42, 43}));
    ASSERT_TRUE(r->add_pids(Instance::PidList::kEvents, {44}));
    ASSERT_TRUE(r->add_pids(Instance::PidList::kEvents, {}));  // nothing to write
    EXPECT_EQ(t.get(rel + "/set_event_pid"), "42 43\n44\n");
  }
  testing::internal::GetCapturedStderr();  // the rmdir of a non-empty fake dir fails
  EXPECT_EQ(t.writes(), (Lines{"mkdir T/" + rel, "write T/" + rel + "/set_event_pid 42 43",
                               "append T/" + rel + "/set_event_pid 44",
                               // the undo: truncation empties the kernel's list
                               "write T/" + rel + "/set_event_pid ", "rmdir T/" + rel}));
  EXPECT_EQ(t.get(rel + "/set_event_pid"), "");
}

TEST(TracefsInstancePidsTest, MissingFileIsAnErrorAndNothingToUndo) {
  FakeTree t;
  std::string rel;
  {
    auto r = Instance::create(t.dir());
    ASSERT_TRUE(r);
    rel = "instances/" + r->name();
    auto st = r->set_event_pid({1});
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().err, ENOENT);
    EXPECT_NE(st.error().path.find("set_event_pid"), std::string::npos);
  }
  EXPECT_EQ(t.writes(),
            (Lines{"mkdir T/" + rel, "write T/" + rel + "/set_event_pid 1", "rmdir T/" + rel}));
}

TEST(TracefsInstancePidsTest, HasProbesFilesAndDirectories) {
  FakeTree t;
  auto r = Instance::create(t.dir());
  ASSERT_TRUE(r);
  std::string rel = "instances/" + r->name();
  t.put(rel + "/options/event-fork", "0\n");
  EXPECT_TRUE(r->has("options/event-fork"));
  EXPECT_TRUE(r->has("options"));
  EXPECT_FALSE(r->has("options/function-fork"));
  EXPECT_FALSE(r->has("set_event_pid"));
  std::filesystem::remove_all(t.dir() + "/" + rel + "/options");
}

}  // namespace
}  // namespace tracekit::tracefs
