// Which events of a tracefs instance come from the threads of one process
// (-p), when the kernel's pid list follows forks.
//
// With options/event-fork (and function-fork for the function tracer) the
// instance's pid list (set_event_pid, set_ftrace_pid) starts as the
// process's threads and gains every task that a task on it creates: threads,
// and child processes with all of theirs. Events carry only the thread that
// ran (common_pid), so the process's threads are told from the rest here:
//  - the threads listed at the start are members;
//  - task:task_newtask, traced in the same instance, says that parent P
//    created task C with clone_flags. It fires in P's context, so the pid
//    list admits it whenever P is on the list. C is a member if the clone
//    had CLONE_THREAD and P is a member; a clone without CLONE_THREAD makes
//    a new process, never a member;
//  - else /proc/TID/status of a task that still lives (Tgid).
// A task that has exited, and whose newtask record has not been read yet,
// is unknown for a while: buffers are per CPU, and the record may sit in a
// CPU read before it was written, in this pass over the CPUs. ThreadFilter
// holds the events of unknown tasks (and every event after them, to keep
// the order) until every CPU has been read once more, then decides:
// unknown then means not a member (its newtask record was lost, or it is a
// task that ran when a member was switched in, which sched_switch records:
// the kernel keeps that event when prev or next is on the list).
//
// A thread id reused within the trace by a task of another process keeps
// the verdict of the first task until a newtask record names the new one.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ftrace/reader.hpp"

namespace tracekit::session {

// CLONE_THREAD of <linux/sched.h>: the new task shares the thread group.
inline constexpr uint64_t kCloneThread = 0x00010000;

class ThreadGroup {
 public:
  enum class Verdict : uint8_t { kMember, kOther, kUnknown };

  // pid: the process; threads: its threads when tracing began.
  ThreadGroup(int pid, const std::vector<int>& threads);

  // A thread found after the start (a second listing).
  void add_thread(int tid);
  // task:task_newtask: parent created child with clone_flags.
  void new_task(int parent, int child, uint64_t clone_flags);
  // /proc says: tid is a thread of process tgid.
  void learn(int tid, int tgid);
  // What is known of tid. The idle task (0) is never a member.
  Verdict classify(int tid) const;
  int pid() const { return pid_; }

 private:
  struct Link {
    int parent;
    bool thread;  // CLONE_THREAD
  };
  Verdict classify(int tid, int depth) const;
  int pid_;
  std::unordered_map<int, bool> known_;  // tid -> member
  std::unordered_map<int, Link> links_;  // from newtask records
};

// Events in, the events of the process's threads out, in the order they
// came (see the top of this file).
class ThreadFilter {
 public:
  using Callback = ftrace::Reader::Callback;
  // The process of a live task (/proc/TID/status Tgid); nullopt when the
  // task is gone.
  using TgidLookup = std::function<std::optional<int>(int tid)>;

  ThreadFilter(ThreadGroup group, TgidLookup tgid);

  ThreadGroup& group() { return group_; }
  // An event as read: handed to fn now when nothing is held and its task is
  // known to be a member, dropped when known not to be, held otherwise (a
  // copy: e's spans need not outlive the call).
  void push(const ftrace::Event& e, const Callback& fn);
  // Every CPU has been read once more: hands out (or drops) what can now be
  // decided, and decides what was held for a whole pass.
  void end_of_pass(const Callback& fn);
  // Everything has been read: decides and hands out everything held.
  void finish(const Callback& fn);
  size_t held() const { return held_.size(); }

 private:
  struct Held {
    ftrace::Event event;
    std::vector<uint8_t> data;
    std::vector<uint64_t> stack;
    std::vector<uint8_t> stack_record;
    std::vector<uint64_t> user_stack;
    std::vector<uint8_t> user_stack_record;
    int passes = 0;  // end_of_pass() calls since it was pushed
  };
  ThreadGroup::Verdict verdict(int tid);
  // Hands out or drops held events from the front while they can be
  // decided; with force, decides every one.
  void release(const Callback& fn, int min_passes, bool force);
  ThreadGroup group_;
  TgidLookup tgid_;
  std::unordered_set<int> gone_;  // looked up in /proc and not found
  std::deque<Held> held_;
};

}  // namespace tracekit::session
