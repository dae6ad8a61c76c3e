#include "perf-stat-hist/perf_stat_hist.hpp"

#include <traceevent/event-parse.h>

#include <cerrno>
#include <limits>
#include <sstream>

#include "perf-stat-hist/render.hpp"
#include "perf/bucket_counters.hpp"
#include "session/bucket_histogram.hpp"
#include "tracefs/event_format.hpp"
#include "tracefs/filter.hpp"
#include "util/strings.hpp"

namespace tracekit::perf_stat_hist {

namespace {

constexpr const char* kTool = "perf-stat-hist";

bool valid_name(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

}  // namespace

Result<std::vector<int64_t>> parse_buckets(std::string_view text) {
  std::string list(text);
  for (char& c : list)
    if (c == ' ' || c == '\t') c = ',';
  std::vector<int64_t> edges;
  for (auto field : split(list, ',')) {
    if (field.empty()) continue;
    auto v = parse_int<int64_t>(field);
    if (!v || *v == std::numeric_limits<int64_t>::min())
      return Error{
          EINVAL, "invalid bucket '" + std::string(field) + "': edges are whole numbers", {}, {}};
    if (!edges.empty() && *v <= edges.back())
      return Error{EINVAL, "bucket list must increase in size", {}, {}};
    edges.push_back(*v);
  }
  if (edges.empty()) return Error{EINVAL, "no bucket edges in '" + std::string(text) + "'", {}, {}};
  return edges;
}

std::vector<int64_t> power_buckets(int64_t power, int64_t max) {
  std::vector<int64_t> edges{0};
  for (int64_t s = 1; s <= max; s *= power) {
    edges.push_back(s);
    if (s > max / power) break;  // the next would pass max (or overflow)
  }
  return edges;
}

Result<std::pair<std::string, std::string>> split_tracepoint(std::string_view tracepoint) {
  const auto colon = tracepoint.find(':');
  if (colon != std::string_view::npos) {
    std::string_view system = tracepoint.substr(0, colon), event = tracepoint.substr(colon + 1);
    if (valid_name(system) && valid_name(event))
      return std::pair{std::string(system), std::string(event)};
  }
  return Error{
      EINVAL, "tracepoint '" + std::string(tracepoint) + "' is not category:event", {}, {}};
}

Status check_variable(const tracefs::EventFormat& event, const std::string& variable,
                      const std::vector<int64_t>& edges) {
  const tep_format_field* f = event.field(variable.c_str());
  const std::string where = "field '" + variable + "' of " + event.name();
  if (!f) {
    std::string dir = event.name();
    dir[dir.find(':')] = '/';
    return Error{0,
                 event.name() + " has no field '" + variable + "'",
                 {},
                 "its fields are in tracefs's events/" + dir + "/format"};
  }
  const std::string type = f->type ? f->type : "?";
  // The kernel filters char * fields as strings (user strings for syscall
  // arguments): no < or >= on them.
  const bool string = (f->flags & TEP_FIELD_IS_STRING) ||
                      ((f->flags & TEP_FIELD_IS_POINTER) && type.find("char") != std::string::npos);
  if (string || (f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)))
    return Error{0,
                 where + " is not a number",
                 {},
                 "it is " + type + (string ? ", a string" : ", an array")};
  if (!(f->flags & TEP_FIELD_IS_SIGNED) && edges.front() < 0)
    return Error{0, where + " is unsigned: bucket edges must be 0 or more", {}, {}};
  return {};
}

std::string name_filter(const std::string& name) {
  if (name.empty()) return "";
  const bool glob = name.find_first_of("*?[") != std::string::npos;
  return std::string("comm ") + (glob ? "~" : "==") + " \"" + name + "\"";
}

std::string header_line(const Options& o) {
  std::ostringstream h;
  h << "Tracing " << o.system << ":" << o.event;
  if (!o.filter.empty()) h << " (Filter: " << o.filter << ")";
  if (o.pid) h << " issued by PID " << *o.pid;
  if (!o.name.empty()) h << " issued by process name \"" << o.name << "\"";
  if (o.power)
    h << ", power-of-" << *o.power << ", max " << o.edges.back();
  else
    h << ", specified buckets";
  h << session::histogram_header_end(o.duration);
  return h.str();
}

session::Outcome set_up(const Options& o) {
  auto event = session::counted_event(o.system, o.event);
  if (!event) return event.error();
  if (auto ok = check_variable(*event, o.variable, o.edges); !ok)
    return ok.error();
  const std::string also = tracefs::join_filters(o.filter, name_filter(o.name));
  auto counters = perf::BucketCounters::open(
      event->id(), perf::bucket_filters(o.variable, o.edges, also), o.pid);
  if (!counters) {
    Error e = counters.error();
    // Measured in tests/vm: 3.10's filters have no comm, 4.4's no glob on it.
    if (e.err == EINVAL && !o.name.empty())
      e.hint =
          "this kernel's filters may not take comm (3.10 does not), or a glob on it (4.4 "
          "does not: give a whole name)";
    return e;
  }
  return session::histogram_run(
      kTool, std::move(*counters),
      [edges = o.edges](const std::vector<uint64_t>& counts) {
        return output::perf_stat_hist_histogram(edges, counts);
      },
      header_line(o), o.duration);
}

}  // namespace tracekit::perf_stat_hist
