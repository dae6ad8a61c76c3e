// cachestat: page cache hits and misses per interval (perf-tools'
// cachestat), from counts of four kernel functions kept in the kernel by
// funccount's counting layer (session/counting.hpp: the function
// profiler, else perf counters on kprobes, else the function tracer), and
// the Buffers and Cached sizes of /proc/meminfo.
//
// The four functions, by role; their names changed with the folio
// conversion (Linux 5.16 onwards), and each role takes the newest name the
// kernel has (a newer kernel keeps the old name as a wrapper of the new one
// for a while: counting both would count a call twice):
//
//   accessed      folio_mark_accessed, else mark_page_accessed
//                 (a page of the cache was used: a read or a write)
//   buffer dirty  mark_buffer_dirty (a buffer was written)
//   added         filemap_add_folio, else add_to_page_cache_lru
//                 (a page entered the cache)
//   dirtied       folio_account_dirtied, else account_page_dirtied, else
//                 __folio_mark_dirty (a page became dirty)
//
// The formula, bcc's cachestat's (perf-tools' without its negative
// numbers): accesses = accessed - buffer dirty (writes are no lookups);
// misses = added - dirtied (pages added for writes are no misses); both at
// least 0; hits = accesses - misses; when that is negative (readahead
// added pages never read yet), misses = accesses and hits = 0; ratio =
// hits / accesses (0 without accesses); dirties = buffer dirty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "session/counting.hpp"
#include "session/run.hpp"
#include "util/result.hpp"
#include "session/entry.hpp"

namespace tracekit::cachestat {

struct Options {
  double interval = 1;     // seconds between rows
  bool timestamp = false;  // -t
  bool debug = false;      // -D
};

// The function counted for each role.
struct Functions {
  std::string accessed, buffer_dirty, added, dirtied;
};

// Each role's newest name among available (the kernel's function names,
// sorted, as probe::kernel_functions gives them). Error: a role with none of
// its names (the names tried, in the message). Pure.
Result<Functions> choose_functions(const std::vector<std::string>& available);

// One interval's calls of each role's function.
struct Calls {
  uint64_t accessed = 0, buffer_dirty = 0, added = 0, dirtied = 0;
};

struct Stats {
  uint64_t hits = 0, misses = 0, dirties = 0;
  double ratio = 0;  // percent
};

// The formula above. Pure.
Stats compute(const Calls& c);

// Buffers and Cached of /proc/meminfo text, in MiB; 0 for a line absent.
struct Memory {
  double buffers_mb = 0, cached_mb = 0;
};
Memory parse_meminfo(std::string_view text);

// The first line, as perf-tools says it ("Counting cache functions...
// Output every 1 seconds."). Pure.
std::string header_line(const Options& o);

// cachestat's engine, counting f's functions the way b says (started: the
// functions are counted from now); each report prints one row (counts since
// the last, meminfo now) and starts the counts again. What it created in
// the kernel is undone when it is destroyed. Error: as
// funccount::start_counter.
Result<std::unique_ptr<session::Engine>> start(funccount::Backend b, const Functions& f,
                                               const Options& o,
                                               const funccount::CounterOptions& co);

// Sets cachestat's run up (session/entry.hpp): its counting engine started.
session::Outcome set_up(const Options& o);

}  // namespace tracekit::cachestat
