// The side-band records that describe processes, consumed in one place for
// a tool: COMM and FORK name tasks (TaskNames); exec, new processes and
// MMAP/MMAP2 keep UserSymbols' view of every process's executable mappings,
// so that a process that lived and died between two drains of the rings
// still symbolizes at report time (its /proc/PID is gone by then).
//
// Wiring, for a tool with one system-wide event per CPU:
//   perf_event_attr attr = ...;            // sample_type, callchain, ...
//   perf::request_process_events(attr);    // before opening the events
//   auto events = perf::PerCpuEvents::open(attr, cpus);
//   perf::ProcessEvents process(names, user_syms, attr);
//   ... in the drain callback:
//   if (h.type != PERF_RECORD_SAMPLE) { process.handle(h, rec); return; }
//   // samples: decode with attr.sample_type, note_process(pid) as before
//
// The kernel writes a side-band record to the events of the CPU where it
// happened, so with the bits on every CPU's event each record arrives once.
// With several events per CPU writing into one ring (PerCpuEvents::add),
// request the records on the first event only: each event would write its
// own copy. A per-task event (pid != -1) sees only its task's records (and
// its children's with attr.inherit).
//
// Order: one ring per CPU means records arrive CPU by CPU, not in time
// order. A FORK written by the parent on CPU 1 is often read after the
// child's exec and MMAP2s written on CPU 0, and forgetting the pid then
// would throw the new image away. So records carry their time (sample_id_all
// with PERF_SAMPLE_TIME; FORK and EXIT have their own) and are applied as if
// in time order: an exec or new process older than the one last applied for
// that pid is ignored; a mapping older than the pid's last exec belongs to
// the image before and is ignored; an exec that arrives after mappings newer
// than itself forgets the pid and adds them again. Names likewise: a COMM
// or FORK older than the one that last named a thread is ignored. This needs
// a memory of recent records, dropped once kReorderWindow older than the
// newest record seen: records reordered by more than that (a tool that does
// not drain for a minute) and every record of events without sample_id_all
// or PERF_SAMPLE_TIME are applied in arrival order.
#pragma once

#include <linux/perf_event.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "perf/task_names.hpp"
#include "symbols/user.hpp"

namespace tracekit::perf {

// Sets what ProcessEvents needs in attr: comm, comm_exec, task, mmap (only
// executable mappings: mmap_data stays as it is), mmap2 (where the kernel has
// it; comm_exec too: kernel/features.hpp), sample_id_all, and
// PERF_SAMPLE_TIME in sample_type (so decode samples with attr.sample_type
// as it is after this call). Changes nothing else.
void request_process_events(perf_event_attr& attr);
// Undoes request_process_events' side-band records (COMM, FORK/EXIT, MMAP,
// MMAP2) on a copy of an attr, for more events into the same rings that must
// not write them twice (their sample_id_all and PERF_SAMPLE_TIME stay: a
// ring's records all carry the same trailer).
void drop_process_events(perf_event_attr& attr);

class ProcessEvents {
 public:
  static constexpr uint64_t kReorderWindow = 60'000'000'000;  // ns of record time

  // attr: as the events were opened (it says whether and where records
  // carry their time). names and syms are borrowed and must outlive this.
  ProcessEvents(TaskNames& names, symbols::UserSymbols& syms, const perf_event_attr& attr);

  // Takes one record into account:
  //  COMM      names the thread; an exec (pid == tid) forgets the pid in
  //            syms, whose new image's MMAP2s follow;
  //  FORK      names the new thread after its parent; a new process
  //            (pid == tid) forgets the pid in syms (pid reuse);
  //  MMAP(2)   an executable mapping of a file (or the vDSO) goes to
  //            syms.add_mapping with the record's inode (or build-id);
  //            anonymous memory, [heap], data mappings and pid -1 are skipped;
  //  EXIT      nothing: samples of the process may still be waiting.
  // Returns true when the record was one of those and well formed, false
  // otherwise (samples, LOST, truncated records), which are left to the
  // caller.
  bool handle(const perf_event_header& header, std::span<const uint8_t> record);

  struct Stats {
    uint64_t mappings = 0;  // add_mapping calls, re-adds included
    uint64_t resets = 0;    // forget calls (exec, new process)
    uint64_t stale = 0;     // records ignored for being older than what they would undo
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Mapping {
    uint64_t time = 0;
    uint64_t start = 0, len = 0, pgoff = 0, ino = 0;
    uint8_t build_id_size = 0;
    std::array<uint8_t, 20> build_id{};
    std::string path;
  };
  struct Proc {
    bool reset_seen = false;
    uint64_t reset = 0;           // time of the last exec / new process applied
    std::vector<Mapping> recent;  // added since, within the window
  };

  uint64_t time_of(std::span<const uint8_t> record) const;
  void saw(uint64_t time);
  void reset(uint32_t pid, uint64_t time);
  void map(uint32_t pid, Mapping m);
  void apply(uint32_t pid, const Mapping& m);
  // Whether a name record for tid at time is the newest so far (and notes it).
  bool newest_name(uint32_t tid, uint64_t time);

  TaskNames& names_;
  symbols::UserSymbols& syms_;
  uint64_t sample_type_;
  bool timed_;  // side-band records carry PERF_SAMPLE_TIME in their sample_id
  uint64_t newest_ = 0, next_prune_ = 0;
  std::unordered_map<uint32_t, Proc> procs_;
  std::unordered_map<uint32_t, uint64_t> named_;  // tid -> time of its last name record
  Stats stats_;
};

}  // namespace tracekit::perf
