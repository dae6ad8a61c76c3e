#include "perf/task_names.hpp"

#include <dirent.h>

#include <charconv>
#include <utility>
#include <vector>

#include "perf/sample.hpp"
#include "util/strings.hpp"

namespace tracekit::perf {

namespace {

constexpr std::string_view kUnknown = "[unknown]";

// Placeholders are a NUL byte, the thread's id, '/' and its process's id:
// no comm holds a NUL.
std::string placeholder(uint32_t tid, uint32_t pid) {
  return std::string(1, '\0') + std::to_string(tid) + "/" + std::to_string(pid);
}
bool is_placeholder(std::string_view name) { return !name.empty() && name[0] == '\0'; }
// The thread and process ids of a placeholder.
std::pair<uint32_t, uint32_t> ids_of(std::string_view p) {
  uint32_t tid = 0, pid = 0;
  auto [slash, ec] = std::from_chars(p.data() + 1, p.data() + p.size(), tid);
  if (slash < p.data() + p.size()) std::from_chars(slash + 1, p.data() + p.size(), pid);
  return {tid, pid};
}

// The numeric entries of a /proc directory (processes, or a process's tasks).
std::vector<uint32_t> ids_in(const std::string& dir) {
  std::vector<uint32_t> ids;
  DIR* d = opendir(dir.c_str());
  if (!d) return ids;
  while (const dirent* e = readdir(d)) {
    std::string_view name(e->d_name);
    uint32_t id = 0;
    auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
    if (ec == std::errc() && end == name.data() + name.size()) ids.push_back(id);
  }
  closedir(d);
  return ids;
}

}  // namespace

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
    // A parent not named yet (its records still unread: each CPU's ring is
    // read in turn): the child is named after it once it is (settle()
    // follows the placeholder).
    auto parent = by_tid_.find(t.ptid);
    std::string name = parent == by_tid_.end() || is_placeholder(parent->second)
                           ? placeholder(t.ptid, t.ppid)
                           : parent->second;  // (copied first: the insert may rehash)
    by_tid_[t.tid] = std::move(name);
  }
  return false;
}

void TaskNames::note_existing(std::optional<uint32_t> pid) {
  std::vector<uint32_t> pids = pid ? std::vector<uint32_t>{*pid} : ids_in(proc_);
  for (uint32_t p : pids) {
    const std::string tasks = proc_ + "/" + std::to_string(p) + "/task";
    for (uint32_t tid : ids_in(tasks)) {
      if (by_tid_.contains(tid)) continue;
      auto text = read_file(tasks + "/" + std::to_string(tid) + "/comm");
      if (text.ok() && !trim(*text).empty()) by_tid_.emplace(tid, std::string(trim(*text)));
    }
  }
}

std::string_view TaskNames::comm(uint32_t pid, uint32_t tid, uint32_t cpu) {
  if (tid == 0) {
    scratch_ = "swapper/" + std::to_string(cpu);
    return scratch_;
  }
  auto it = by_tid_.find(tid);
  if (it != by_tid_.end()) return it->second;
  std::string name = placeholder(tid, pid);
  auto text = read_file(proc_ + "/" + std::to_string(pid) + "/task/" + std::to_string(tid) + "/comm");
  if (text.ok() && !trim(*text).empty()) name = std::string(trim(*text));
  return by_tid_.emplace(tid, std::move(name)).first->second;
}

std::string TaskNames::settle(std::string_view comm, const Fallback& fallback) const {
  if (!is_placeholder(comm)) return std::string(comm);
  // A placeholder names a thread, whose entry may name its parent's (a
  // FORK read before the parent was named); a thread's own placeholder
  // ends the chain.
  std::string_view name = comm;
  for (int depth = 0; depth < 16 && is_placeholder(name); ++depth) {
    auto it = by_tid_.find(ids_of(name).first);
    if (it == by_tid_.end() || it->second == name) break;
    name = it->second;
  }
  if (!is_placeholder(name)) return std::string(name);
  auto [tid, pid] = ids_of(comm);
  if (fallback)
    if (auto saved = fallback(tid)) return *saved;
  // Last, its process's name: a thread that existed before the trace and
  // ended before the start read the names (the tool's own, the kernel
  // symbols loader) gets no record; threads are named after their creator.
  if (auto it = by_tid_.find(pid); pid != tid && it != by_tid_.end() && !is_placeholder(it->second))
    return it->second;
  return std::string(kUnknown);
}

}  // namespace tracekit::perf
