#include "perf/task_names.hpp"

#include "perf/sample.hpp"
#include "util/strings.hpp"

namespace tracekit::perf {

bool TaskNames::handle(const perf_event_header& header, std::span<const uint8_t> record) {
  if (header.type == PERF_RECORD_COMM) {
    Comm c;
    if (!decode_comm(record, c)) return false;
    by_tid_[c.tid] = std::string(c.comm);
    return c.exec && c.pid == c.tid;
  }
  if (header.type == PERF_RECORD_FORK) {
    Task t;
    if (!decode_task(record, t)) return false;
    auto parent = by_tid_.find(t.ptid);
    if (parent != by_tid_.end()) {
      std::string name = parent->second;  // copy first: the insert may rehash
      by_tid_[t.tid] = std::move(name);
    } else {
      // Unknown parent: forget any older task that had this tid, so the next
      // comm() asks /proc about the new one.
      by_tid_.erase(t.tid);
    }
  }
  return false;
}

std::string_view TaskNames::comm(uint32_t pid, uint32_t tid, uint32_t cpu) {
  if (tid == 0) {
    scratch_ = "swapper/" + std::to_string(cpu);
    return scratch_;
  }
  auto it = by_tid_.find(tid);
  if (it != by_tid_.end()) return it->second;
  std::string name = "[unknown]";
  auto text = read_file(proc_ + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (text.ok() && !trim(*text).empty()) name = std::string(trim(*text));
  return by_tid_.emplace(tid, std::move(name)).first->second;
}

}  // namespace tracekit::perf
