#include "perf/follow.hpp"

#include <cerrno>
#include <set>

#include "util/proc.hpp"

namespace tracekit::perf {

void FollowedThreads::own(uint32_t tid, const std::vector<uint64_t>& ids) {
  own_[tid].insert(ids.begin(), ids.end());
}

bool FollowedThreads::duplicate(uint32_t tid, uint64_t id) const {
  auto it = own_.find(tid);
  return it != own_.end() && !it->second.contains(id);
}

Result<FollowedThreads> follow_threads(
    int pid, const std::function<std::vector<int>()>& list,
    const std::function<Status(int tid, std::vector<uint64_t>* ids)>& open) {
  const Error gone = no_process_error(pid);
  FollowedThreads followed;
  std::set<int> seen;
  size_t opened = 0;
  for (int round = 0; round < kMaxFollowRounds; ++round) {
    std::vector<int> fresh;
    for (int tid : list())
      if (seen.insert(tid).second) fresh.push_back(tid);
    if (fresh.empty()) break;
    for (int tid : fresh) {
      std::vector<uint64_t> ids;
      Status st = open(tid, round == 0 ? nullptr : &ids);
      if (!st) {
        if (st.error().err == ESRCH) continue;  // exited since the listing
        return st.error();
      }
      ++opened;
      if (round > 0) followed.own(static_cast<uint32_t>(tid), ids);
    }
  }
  if (opened == 0) return gone;
  return followed;
}

Result<FollowedThreads> follow_process(PerCpuEvents& events,
                                       const std::vector<perf_event_attr>& attrs, int pid,
                                       const std::vector<std::string>& filters) {
  return follow_threads(
      pid, [pid] { return threads_of(pid); },
      [&](int tid, std::vector<uint64_t>* ids) -> Status {
        for (size_t i = 0; i < attrs.size(); ++i)
          if (auto st = events.add(attrs[i], tid, ids, i < filters.size() ? filters[i] : "");
              !st)
            return st;
        return {};
      });
}

}  // namespace tracekit::perf
