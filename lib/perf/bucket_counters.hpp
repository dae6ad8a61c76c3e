// Histograms counted in the kernel (perf-tools' bitesize and
// perf-stat-hist): one perf counter per bucket on one tracepoint, each with
// a filter that admits the bucket's range of a field of the event
// ("nr_sector >= 16 && nr_sector < 128"). The kernel counts the events
// that pass each filter: no ring buffer, no record per event; the counts
// are read when a report is made.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "perf/counters.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// One filter per bucket of a histogram of field with these edges
// (ascending), below the first edge first: "f < e0", "f >= e0 && f < e1",
// ..., "f >= eN"; edges.size() + 1 of them. Each is joined with also
// ("(f < e0) && (also)") when that is not empty. Pure.
std::vector<std::string> bucket_filters(const std::string& field, const std::vector<int64_t>& edges,
                                        const std::string& also = "");

class BucketCounters {
 public:
  // One counter per filter on the tracepoint event_id, enabled: on every
  // online CPU, or with pid in the threads of that process and every task
  // they start afterwards. Error: no process pid (no_process_error), or as
  // Counters::open (a filter the kernel refused names it).
  static Result<BucketCounters> open(int event_id, const std::vector<std::string>& filters,
                                     std::optional<int> pid = std::nullopt);
  BucketCounters(BucketCounters&&) noexcept = default;

  // Keeps the counts of tracing that has ended (a run's stop), for the
  // next counts() to return.
  void stop();
  // Each bucket's count since the last counts() (since they were opened,
  // the first time), or those stop() kept. Error: a counter read failed.
  Result<std::vector<uint64_t>> counts();

 private:
  explicit BucketCounters(Counters c) : counters_(std::move(c)) {}
  Counters counters_;
  std::optional<Result<std::vector<uint64_t>>> stopped_;
};

}  // namespace tracekit::perf
