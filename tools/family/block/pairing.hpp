// Block request start/completion pairing, by device and sector, for iosnoop
// and iolatency. Pure: events in, finished I/Os out.
//
// How this works. A start (block_rq_issue, or with -Q block_rq_insert) is
// kept under (dev, sector) until a completion at that key. What perf-tools'
// awk (a table keyed by dev and sector, nothing more) gets wrong, and what
// happens here instead:
//  - CPU order: each CPU's ring is in time order, but a completion on one
//    CPU can be read before the issue on another. Each batch is sorted by
//    time, and a completion with no start is held back one batch, then
//    paired if its start came late, else counted (unmatched()).
//  - -Q: an I/O the kernel issues directly has no insert (blk-mq without a
//    scheduler). Both are traced: the insert starts an I/O, the issue of an
//    inserted one is ignored, the issue of one never inserted starts it
//    (zero queue time). perf-tools -Q sees none of those I/Os.
//  - requeues (block_rq_requeue): the request is issued (or inserted) again
//    by whoever runs the queue then, often a kworker: the I/O keeps its
//    first start, PID and name. perf-tools restarts it and blames the
//    kworker.
//  - split completions: a request completed in parts completes at sector
//    S for n sectors, then at S+n: the I/O moves to S+n, and is done when
//    all its sectors are (bytes: all of them; latency: to the last part).
//    perf-tools prints the first part and loses the rest.
//  - merges after the start (a bio merged into a queued request, or a
//    request merged into another, block_rq_merge): the request completes
//    with more sectors than it started with (BYTES are the completion's),
//    or, after a front merge, at a lower sector than its start: a
//    completion with no start at its own sector takes the earliest start
//    inside its range. Starts inside a completed range are requests merged
//    into it: forgotten and counted (merged()). perf-tools keeps them
//    forever and drops front-merged I/Os.
//  - lost events (the ring was full): what was pending may never complete,
//    or pair with a later I/O at the same sector: reset() forgets it all
//    (counted). A start at a key still pending (its completion was lost)
//    replaces it (counted).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "family/block/event.hpp"

namespace tracekit::block {

// One finished I/O.
struct Io {
  uint64_t start_ts = 0, end_ts = 0;  // ns
  uint32_t dev = 0;
  uint64_t sector = 0;  // where it started
  uint64_t bytes = 0;   // completed sectors * 512 (a request without sectors: its bytes)
  std::string rwbs;     // the completion's
  int pid = 0;          // the task that started it (common_pid of the start)
  std::string comm;
  bool queued = false;  // the start was an insert (-Q)
};

struct PairStats {
  uint64_t completed = 0;
  uint64_t unmatched = 0;  // completions without a start (started before tracing, or filtered)
  uint64_t replaced = 0;   // starts whose completion never came (a newer start took the key)
  uint64_t merged = 0;     // started requests merged into another
  uint64_t requeued = 0;
  uint64_t split = 0;         // partial completions
  uint64_t front_merged = 0;  // completions paired by range, below their start
  uint64_t resets = 0;
};

class Pairer {
 public:
  using Done = std::function<void(const Io&)>;
  // queue_start (-Q): inserts start I/Os, issues only those never inserted.
  explicit Pairer(bool queue_start) : queue_start_(queue_start) {}

  // Sorts batch by time together with the completions held back last time
  // and pairs them; done gets each finished I/O, in completion order.
  void feed(std::vector<Event> batch, const Done& done);
  // The end: pairs the held-back completions once more and holds nothing.
  void finish(const Done& done);
  // Events were lost: forgets every pending start and held completion.
  void reset();

  const PairStats& stats() const { return stats_; }
  size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    uint64_t start_ts = 0;
    uint64_t first_sector = 0;
    uint32_t sectors = 0;       // left to complete
    uint64_t done_sectors = 0;  // completed so far (split completions)
    uint32_t bytes = 0;
    int pid = 0;
    std::string comm;
    bool queued = false;    // started by an insert
    bool issued = false;    // seen issued (an insert's issue is not a new start)
    bool requeued = false;  // requeued: the next start is not a new I/O
  };
  using Key = std::pair<uint32_t, uint64_t>;  // dev, sector

  void start(const Event& e);
  void requeue(const Event& e);
  // False: no start found (hold it back, or count it).
  bool complete(const Event& e, const Done& done);
  // Pairs fresh with the held-back completions; hold: keep this batch's
  // unpaired completions for the next (else count them).
  void run(std::vector<Event> fresh, bool hold, const Done& done);

  bool queue_start_;
  std::map<Key, Pending> pending_;
  std::vector<Event> held_;
  PairStats stats_;
};

}  // namespace tracekit::block
