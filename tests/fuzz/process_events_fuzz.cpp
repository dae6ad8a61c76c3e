// perf/process_events.hpp ProcessEvents: a stream of side-band records
// (COMM, FORK, EXIT, MMAP, MMAP2, in any order and any state of repair)
// applied to TaskNames and UserSymbols, as a tool's drain loop does. Input:
// the events' sample_type (u64), a flags byte (bit 0: sample_id_all), then
// records back to back, each as long as its header says (a header that
// says less than 8 or more than is left takes the rest). Each record sits
// in a block of its exact size.
#include <linux/perf_event.h>

#include <set>

#include "fuzz.hpp"
#include "perf/process_events.hpp"
#include "perf/sample.hpp"
#include "perf/task_names.hpp"
#include "symbols/user.hpp"

using namespace tracekit;

TRACEKIT_FUZZ_TARGET(process_events) {
  fuzz::Input in(data, size);
  perf_event_attr attr{};
  attr.sample_type = in.take<uint64_t>();
  attr.sample_id_all = in.take<uint8_t>() & 1;

  // No /proc lookups for names: the stream is all there is.
  perf::TaskNames names("/nonexistent/tracekit-fuzz");
  symbols::UserSymbols syms;
  perf::ProcessEvents events(names, syms, attr);
  std::set<uint32_t> tids;
  uint64_t handled = 0;
  while (in.left() > 0) {
    perf_event_header h{};
    auto head = in.bytes(sizeof h);
    std::memcpy(&h, head.data(), head.size());
    size_t body = h.size >= sizeof h ? h.size - sizeof h : in.left();
    auto tail = in.bytes(body);
    auto* block = new uint8_t[head.size() + tail.size()];
    std::memcpy(block, head.data(), head.size());
    if (!tail.empty()) std::memcpy(block + head.size(), tail.data(), tail.size());
    std::span<const uint8_t> rec(block, head.size() + tail.size());
    bool ok = events.handle(h, rec);
    if (ok) ++handled;
    FUZZ_CHECK(!ok || h.type == PERF_RECORD_COMM || h.type == PERF_RECORD_FORK ||
               h.type == PERF_RECORD_EXIT || h.type == PERF_RECORD_MMAP ||
               h.type == PERF_RECORD_MMAP2);
    perf::Comm c;
    if (perf::decode_comm(rec, c)) tids.insert(c.tid);
    perf::Task t;
    if (perf::decode_task(rec, t)) tids.insert(t.tid);
    delete[] block;
  }
  for (uint32_t tid : tids) {
    // comm() may give a placeholder (a NUL byte first) for a thread no
    // record named yet; what is printed is settled, and holds no NUL.
    const std::string name = names.settle(names.comm(tid, tid, 0));
    FUZZ_CHECK(name.find('\0') == std::string::npos);  // (empty is a name: prctl)
  }
  const auto& st = events.stats();
  // A record counts at most twice: a FORK or exec COMM can be stale both as
  // a name and as a reset.
  FUZZ_CHECK(st.resets + st.stale <= 2 * handled);
}
