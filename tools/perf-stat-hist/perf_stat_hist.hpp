// perf-stat-hist: a histogram of a tracepoint's field, counted in the
// kernel (perf-tools' perf-stat-hist). One perf counter per bucket on the
// tracepoint, each with a filter on the field ("count >= 4 && count < 16"),
// on every CPU or in one process's threads (-p): the kernel counts the
// events that pass, no ring buffer, no record per event; the counters are
// read once, at the end (perf::BucketCounters, as bitesize).
//
// Buckets as perf-tools makes them: power-of-P edges 0, 1, P, P^2, ... up
// to -m max (default power-of-4, max 1048576), or -b's list; a value
// counts in [edge, next edge), below the first edge in the first bucket,
// from the last edge up in the last.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.hpp"
#include "session/entry.hpp"

namespace tracekit::tracefs {
class EventFormat;
}

namespace tracekit::perf_stat_hist {

struct Options {
  std::string system, event;       // of the tracepoint "system:event"
  std::string variable;            // the field
  std::vector<int64_t> edges;      // bucket edges, increasing
  std::optional<int64_t> power;    // -P (default 4); nullopt with -b
  std::string filter;              // -f, the kernel's syntax
  std::optional<int> pid;          // -p
  std::string name;                // -n, a comm or a glob
  std::optional<double> duration;  // seconds
};

// "10 50 100" (perf-tools' form) or "10,50,100" -> edges. Error: a value
// that is not a whole number (negative ones are), none, or a list that does
// not increase ("bucket list must increase in size"). Pure.
Result<std::vector<int64_t>> parse_buckets(std::string_view text);

// perf-tools' power-of edges: 0, then 1, power, power^2, ... while at most
// max (power >= 2; max < 1: 0 alone). Pure.
std::vector<int64_t> power_buckets(int64_t power, int64_t max);

// "system:event" -> its two names. Error: not of that form, or a name
// that is not letters, digits, '_' and '-'. Pure.
Result<std::pair<std::string, std::string>> split_tracepoint(std::string_view tracepoint);

// The variable as a field of event that buckets can filter on. Error,
// naming the field and the tracepoint: no such field (the common_ fields
// are not offered), a string or array field, or negative edges for an
// unsigned field (the kernel would refuse their filters).
Status check_variable(const tracefs::EventFormat& event, const std::string& variable,
                      const std::vector<int64_t>& edges);

// -n's kernel filter: comm == "NAME", or comm ~ "NAME" for a glob (with
// *, ? or [). Pure; "" for "".
std::string name_filter(const std::string& name);

// perf-tools' header: "Tracing syscalls:sys_enter_read, power-of-4, max
// 1048576, for 5 seconds...\n" (", specified buckets" with -b; " until
// Ctrl-C..." without seconds; " (Filter: F)" after the tracepoint with -f,
// then ours: " issued by PID N" with -p, " issued by process name "X""
// with -n). max is the last edge. Pure.
std::string header_line(const Options& o);

// Sets the run up (session/entry.hpp): the counters open, one per bucket.
session::Outcome set_up(const Options& o);

}  // namespace tracekit::perf_stat_hist
