// ThreadGroup (which tasks are threads of the process) and ThreadFilter
// (events in, the threads' events out, in order, some a pass late), with a
// fake /proc.
#include "session/thread_group.hpp"

#include <gtest/gtest.h>

#include <map>

#include "session/capture.hpp"

namespace tracekit::session {
namespace {

using V = ThreadGroup::Verdict;
constexpr uint64_t kThread = kCloneThread | 0x00000f00;  // what pthread_create passes, roughly
constexpr uint64_t kFork = 0x11;                         // SIGCHLD, as fork() passes

TEST(ThreadGroupTest, StartingThreadsAndTheirNewThreadsAreMembers) {
  ThreadGroup g(100, {100, 101});
  EXPECT_EQ(g.classify(100), V::kMember);
  EXPECT_EQ(g.classify(101), V::kMember);
  EXPECT_EQ(g.classify(102), V::kUnknown);
  g.new_task(101, 102, kThread);  // a thread started later
  g.new_task(102, 103, kThread);  // ... and one it started
  EXPECT_EQ(g.classify(102), V::kMember);
  EXPECT_EQ(g.classify(103), V::kMember);
}

TEST(ThreadGroupTest, ChildProcessesAndTheirThreadsAreNot) {
  ThreadGroup g(100, {100});
  g.new_task(100, 200, kFork);    // a child process
  g.new_task(200, 201, kThread);  // its thread
  g.new_task(201, 300, kFork);    // its grandchild
  EXPECT_EQ(g.classify(200), V::kOther);
  EXPECT_EQ(g.classify(201), V::kOther);
  EXPECT_EQ(g.classify(300), V::kOther);
}

TEST(ThreadGroupTest, RecordsReadOutOfOrderStillChain) {
  ThreadGroup g(100, {100});
  // The grandchild's record is read first: its parent is not known yet.
  g.new_task(150, 151, kThread);
  EXPECT_EQ(g.classify(151), V::kUnknown);
  g.new_task(100, 150, kThread);
  EXPECT_EQ(g.classify(151), V::kMember);
  // A thread of an unknown parent that forked: known not a member at once.
  g.new_task(999, 998, kFork);
  EXPECT_EQ(g.classify(998), V::kOther);
}

TEST(ThreadGroupTest, ProcAndListingsAndTheIdleTask) {
  ThreadGroup g(100, {100});
  g.learn(300, 300);
  g.learn(301, 100);
  EXPECT_EQ(g.classify(300), V::kOther);
  EXPECT_EQ(g.classify(301), V::kMember);
  g.add_thread(302);
  EXPECT_EQ(g.classify(302), V::kMember);
  EXPECT_EQ(g.classify(0), V::kOther);
  // A newtask record says more than /proc, and replaces what was known of an
  // older task with the same id.
  g.new_task(100, 300, kThread);
  EXPECT_EQ(g.classify(300), V::kMember);
  g.learn(300, 555);
  EXPECT_EQ(g.classify(300), V::kMember);
  g.new_task(555, 301, kFork);
  EXPECT_EQ(g.classify(301), V::kOther);
}

TEST(ThreadGroupTest, ACycleOfReusedIdsEndsUnknown) {
  ThreadGroup g(100, {100});
  g.new_task(401, 400, kThread);
  g.new_task(400, 401, kThread);
  EXPECT_EQ(g.classify(400), V::kUnknown);
}

// Events with a stack, handed out or held by a ThreadFilter over a fake
// /proc (tid -> tgid of the tasks alive).
class ThreadFilterTest : public ::testing::Test {
 protected:
  ThreadFilterTest()
      : filter_(ThreadGroup(100, {100}), [this](int tid) -> std::optional<int> {
          ++lookups_;
          auto it = alive_.find(tid);
          if (it == alive_.end()) return std::nullopt;
          return it->second;
        }) {}

  // An event of tid with a one-frame stack frame (its identity in out_),
  // pushed from a buffer that is overwritten right after.
  void push(int tid, uint64_t frame) {
    std::vector<uint64_t> stack{frame};
    std::vector<uint8_t> data{1, 2, 3};
    ftrace::Event e;
    e.pid = tid;
    e.stack = stack;
    e.data = data;
    e.has_stack = true;
    filter_.push(e, collect());
    stack[0] = 0;
    data[0] = 0;
  }
  ftrace::Reader::Callback collect() {
    return [this](const ftrace::Event& e) {
      ASSERT_EQ(e.stack.size(), 1u);
      ASSERT_EQ(e.data.size(), 3u);
      EXPECT_EQ(e.data[0], 1);
      out_.push_back(e.stack[0]);
    };
  }

  std::map<int, int> alive_;
  int lookups_ = 0;
  ThreadFilter filter_;
  std::vector<uint64_t> out_;
};

TEST_F(ThreadFilterTest, KnownTasksPassOrAreDroppedAtOnce) {
  alive_ = {{300, 300}};
  push(100, 1);
  push(300, 2);  // another process, alive: /proc says so
  push(300, 3);
  push(0, 4);  // idle
  EXPECT_EQ(out_, (std::vector<uint64_t>{1}));
  EXPECT_EQ(lookups_, 1);  // /proc once per task
  EXPECT_EQ(filter_.held(), 0u);
}

TEST_F(ThreadFilterTest, LiveNewThreadsPassByProc) {
  alive_ = {{101, 100}};
  push(101, 1);
  EXPECT_EQ(out_, (std::vector<uint64_t>{1}));
}

TEST_F(ThreadFilterTest, GoneTaskWaitsForItsNewtaskRecordInOrder) {
  push(100, 1);
  push(150, 2);  // gone, unknown: held
  push(100, 3);  // held behind it, to keep the order
  EXPECT_EQ(out_, (std::vector<uint64_t>{1}));
  EXPECT_EQ(filter_.held(), 2u);
  filter_.end_of_pass(collect());  // the pass it was read in
  EXPECT_EQ(filter_.held(), 2u);
  filter_.group().new_task(100, 150, kThread);  // read from another CPU
  filter_.end_of_pass(collect());
  EXPECT_EQ(out_, (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(filter_.held(), 0u);
}

TEST_F(ThreadFilterTest, ANewtaskRecordReleasesAtTheNextPush) {
  push(150, 1);
  filter_.group().new_task(100, 150, kThread);
  push(150, 2);
  EXPECT_EQ(out_, (std::vector<uint64_t>{1, 2}));
}

TEST_F(ThreadFilterTest, UnknownAfterAWholePassIsDropped) {
  push(150, 1);
  push(100, 2);
  filter_.end_of_pass(collect());
  EXPECT_TRUE(out_.empty());
  filter_.end_of_pass(collect());
  EXPECT_EQ(out_, (std::vector<uint64_t>{2}));
  EXPECT_EQ(filter_.held(), 0u);
}

TEST_F(ThreadFilterTest, ChildProcessesFoundLateAreDropped) {
  push(200, 1);
  push(150, 2);
  filter_.group().new_task(100, 200, kFork);
  filter_.group().new_task(100, 150, kThread);
  filter_.finish(collect());
  EXPECT_EQ(out_, (std::vector<uint64_t>{2}));
}

TEST_F(ThreadFilterTest, FinishDecidesEverything) {
  push(150, 1);
  push(100, 2);
  filter_.finish(collect());
  EXPECT_EQ(out_, (std::vector<uint64_t>{2}));
  EXPECT_EQ(filter_.held(), 0u);
}

TEST(CanFollowForksTest, NeedsTheListsAndTheirForkOptions) {
  auto tree = [](std::set<std::string> files) {
    return [files](const std::string& rel) { return files.contains(rel); };
  };
  const std::set<std::string> events{"set_event_pid", "options/event-fork"};
  std::set<std::string> all = events;
  all.insert({"set_ftrace_pid", "options/function-fork"});
  EXPECT_TRUE(can_follow_forks(tree(events), false));
  EXPECT_FALSE(can_follow_forks(tree(events), true));
  EXPECT_TRUE(can_follow_forks(tree(all), true));
  EXPECT_FALSE(can_follow_forks(tree({"set_event_pid"}), false));  // Linux 4.4 to 4.6
  EXPECT_FALSE(can_follow_forks(tree({"options/event-fork"}), false));
  EXPECT_FALSE(
      can_follow_forks(tree({"set_event_pid", "options/event-fork", "set_ftrace_pid"}), true));
}

}  // namespace
}  // namespace tracekit::session
