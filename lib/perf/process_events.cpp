// How this works: every record is decoded, timed (its sample_id, or the
// time field FORK and EXIT carry) and then applied at once; nothing is held
// back, since samples are symbolized only at report time and what matters
// is the state each pid ends with. Out-of-order arrival is undone per pid:
// Proc::reset is the time of the exec (or fork) that started the pid's
// current image, and Proc::recent the mappings added since, kept so that a
// late reset older than some of them can forget the pid and add them again.
// Per-thread name times play the same part for TaskNames, which applies
// whatever it is given.
#include "perf/process_events.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "kernel/features.hpp"
#include "perf/sample.hpp"

namespace tracekit::perf {

void request_process_events(perf_event_attr& attr) {
  // Kernels before 3.16 have no exec flag on COMM (an exec is then known by
  // the new image's MMAP records, which replace what they overlap), before
  // 3.12 no MMAP2 (PERF_RECORD_MMAP: no inode to check the file by).
  auto& features = kernel::Features::host();
  attr.comm = 1;
  attr.comm_exec = features.has(kernel::Feature::kCommExec);
  attr.task = 1;
  attr.mmap = 1;
  attr.mmap2 = features.has(kernel::Feature::kMmap2);
  attr.sample_id_all = 1;
  attr.sample_type |= PERF_SAMPLE_TIME;
}

void drop_process_events(perf_event_attr& attr) {
  attr.comm = 0;
  attr.comm_exec = 0;
  attr.task = 0;
  attr.mmap = 0;
  attr.mmap2 = 0;
  attr.mmap_data = 0;
}

ProcessEvents::ProcessEvents(TaskNames& names, symbols::UserSymbols& syms,
                             const perf_event_attr& attr)
    : names_(names),
      syms_(syms),
      sample_type_(attr.sample_type),
      timed_(attr.sample_id_all && (attr.sample_type & PERF_SAMPLE_TIME)) {}

uint64_t ProcessEvents::time_of(std::span<const uint8_t> record) const {
  SampleId id;
  if (!timed_ || !decode_sample_id(sample_type_, record, id)) return 0;
  return id.time;
}

void ProcessEvents::saw(uint64_t time) {
  newest_ = std::max(newest_, time);
  if (newest_ < next_prune_) return;
  next_prune_ = newest_ + kReorderWindow / 4;
  if (newest_ < kReorderWindow) return;
  const uint64_t horizon = newest_ - kReorderWindow;
  for (auto it = procs_.begin(); it != procs_.end();) {
    auto& recent = it->second.recent;
    std::erase_if(recent, [&](const Mapping& m) { return m.time < horizon; });
    if (recent.empty() && it->second.reset < horizon)
      it = procs_.erase(it);
    else
      ++it;
  }
  std::erase_if(named_, [&](const auto& kv) { return kv.second < horizon; });
}

bool ProcessEvents::newest_name(uint32_t tid, uint64_t time) {
  if (!timed_) return true;
  auto [it, fresh] = named_.try_emplace(tid, time);
  if (fresh) return true;
  if (time < it->second) return false;
  it->second = time;
  return true;
}

void ProcessEvents::apply(uint32_t pid, const Mapping& m) {
  symbols::FileIdentity id;
  id.ino = m.ino;
  id.build_id = std::span<const uint8_t>(m.build_id.data(), m.build_id_size);
  syms_.add_mapping(static_cast<pid_t>(pid), m.start, m.len, m.pgoff, m.path, id);
  ++stats_.mappings;
}

void ProcessEvents::reset(uint32_t pid, uint64_t time) {
  if (!timed_) {
    syms_.forget(static_cast<pid_t>(pid));
    ++stats_.resets;
    return;
  }
  Proc& p = procs_[pid];
  if (p.reset_seen && time <= p.reset) {
    ++stats_.stale;  // a later image already replaced the one this starts
    return;
  }
  p.reset_seen = true;
  p.reset = time;
  syms_.forget(static_cast<pid_t>(pid));
  ++stats_.resets;
  std::erase_if(p.recent, [&](const Mapping& m) { return m.time < time; });
  for (const Mapping& m : p.recent) apply(pid, m);
}

void ProcessEvents::map(uint32_t pid, Mapping m) {
  if (!timed_) {
    apply(pid, m);
    return;
  }
  Proc& p = procs_[pid];
  if (p.reset_seen && m.time < p.reset) {
    ++stats_.stale;  // the image it belonged to is gone
    return;
  }
  apply(pid, m);
  p.recent.push_back(std::move(m));
}

bool ProcessEvents::handle(const perf_event_header& header, std::span<const uint8_t> record) {
  switch (header.type) {
    case PERF_RECORD_COMM: {
      Comm c;
      if (!decode_comm(record, c)) return false;
      uint64_t t = time_of(record);
      saw(t);
      if (newest_name(c.tid, t))
        names_.handle(header, record);
      else
        ++stats_.stale;
      if (c.exec && c.pid == c.tid) reset(c.pid, t);
      return true;
    }
    case PERF_RECORD_FORK: {
      Task t;
      if (!decode_task(record, t)) return false;
      saw(t.time);
      if (newest_name(t.tid, t.time))
        names_.handle(header, record);
      else
        ++stats_.stale;
      if (t.pid == t.tid) reset(t.pid, t.time);
      return true;
    }
    case PERF_RECORD_EXIT: {
      Task t;
      if (!decode_task(record, t)) return false;
      saw(t.time);
      return true;
    }
    case PERF_RECORD_MMAP:
    case PERF_RECORD_MMAP2: {
      Mmap2 m;
      bool ok = header.type == PERF_RECORD_MMAP2 ? decode_mmap2(record, m) : decode_mmap(record, m);
      if (!ok) return false;
      uint64_t t = time_of(record);
      saw(t);
      bool exec = header.type == PERF_RECORD_MMAP2 ? (m.prot & PROT_EXEC) != 0 : !m.data;
      bool file = !m.filename.empty() && m.filename[0] == '/' && !m.filename.starts_with("//");
      if (m.pid == static_cast<uint32_t>(-1) || !exec || !(file || m.filename == "[vdso]"))
        return true;
      Mapping mapping;
      mapping.time = t;
      mapping.start = m.addr;
      mapping.len = m.len;
      mapping.pgoff = m.pgoff;
      mapping.ino = m.has_build_id ? 0 : m.ino;
      if (m.has_build_id && m.build_id.size() <= mapping.build_id.size()) {
        mapping.build_id_size = static_cast<uint8_t>(m.build_id.size());
        std::copy(m.build_id.begin(), m.build_id.end(), mapping.build_id.begin());
      }
      mapping.path = std::string(m.filename);
      map(m.pid, std::move(mapping));
      return true;
    }
    default:
      return false;
  }
}

}  // namespace tracekit::perf
