#include "session/thread_group.hpp"

namespace tracekit::session {

namespace {

// Deeper newtask chains than this are not followed (a tid reused along a
// chain could make a cycle).
constexpr int kMaxDepth = 64;

}  // namespace

ThreadGroup::ThreadGroup(int pid, const std::vector<int>& threads) : pid_(pid) {
  for (int t : threads) known_[t] = true;
}

void ThreadGroup::add_thread(int tid) {
  links_.erase(tid);
  known_[tid] = true;
}

void ThreadGroup::new_task(int parent, int child, uint64_t clone_flags) {
  // A newtask record is about the newest task with that id: it replaces
  // whatever a listing or /proc said of an older one.
  known_.erase(child);
  links_[child] = Link{parent, (clone_flags & kCloneThread) != 0};
}

void ThreadGroup::learn(int tid, int tgid) {
  if (links_.contains(tid)) return;  // the newtask record says more
  known_[tid] = tgid == pid_;
}

ThreadGroup::Verdict ThreadGroup::classify(int tid) const { return classify(tid, 0); }

ThreadGroup::Verdict ThreadGroup::classify(int tid, int depth) const {
  if (tid <= 0) return Verdict::kOther;
  if (auto it = known_.find(tid); it != known_.end())
    return it->second ? Verdict::kMember : Verdict::kOther;
  auto link = links_.find(tid);
  if (link == links_.end() || depth >= kMaxDepth) return Verdict::kUnknown;
  if (!link->second.thread) return Verdict::kOther;  // a new process
  return classify(link->second.parent, depth + 1);
}

ThreadFilter::ThreadFilter(ThreadGroup group, TgidLookup tgid)
    : group_(std::move(group)), tgid_(std::move(tgid)) {}

ThreadGroup::Verdict ThreadFilter::verdict(int tid) {
  auto v = group_.classify(tid);
  if (v != ThreadGroup::Verdict::kUnknown || gone_.contains(tid)) return v;
  if (auto tgid = tgid_(tid)) {
    group_.learn(tid, *tgid);
    return group_.classify(tid);
  }
  gone_.insert(tid);
  return v;
}

void ThreadFilter::push(const ftrace::Event& e, const Callback& fn) {
  if (held_.empty()) {
    switch (verdict(e.pid)) {
      case ThreadGroup::Verdict::kMember:
        fn(e);
        return;
      case ThreadGroup::Verdict::kOther:
        return;
      case ThreadGroup::Verdict::kUnknown:
        break;
    }
  }
  Held h;
  h.event = e;
  h.data.assign(e.data.begin(), e.data.end());
  h.stack.assign(e.stack.begin(), e.stack.end());
  h.stack_record.assign(e.stack_record.begin(), e.stack_record.end());
  h.user_stack.assign(e.user_stack.begin(), e.user_stack.end());
  h.user_stack_record.assign(e.user_stack_record.begin(), e.user_stack_record.end());
  held_.push_back(std::move(h));
  release(fn, 2, false);
}

void ThreadFilter::end_of_pass(const Callback& fn) {
  for (auto& h : held_) ++h.passes;
  release(fn, 2, false);
}

void ThreadFilter::finish(const Callback& fn) { release(fn, 0, true); }

void ThreadFilter::release(const Callback& fn, int min_passes, bool force) {
  while (!held_.empty()) {
    Held& h = held_.front();
    auto v = verdict(h.event.pid);
    if (v == ThreadGroup::Verdict::kUnknown && !force && h.passes < min_passes) return;
    if (v == ThreadGroup::Verdict::kMember) {
      h.event.data = h.data;
      h.event.stack = h.stack;
      h.event.stack_record = h.stack_record;
      h.event.user_stack = h.user_stack;
      h.event.user_stack_record = h.user_stack_record;
      fn(h.event);
    }
    held_.pop_front();
  }
}

}  // namespace tracekit::session
