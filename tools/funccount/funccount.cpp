#include "funccount/funccount.hpp"

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "kernel/features.hpp"
#include "perf/event.hpp"
#include "probe/spec.hpp"
#include "session/run.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/proc.hpp"
#include "util/strings.hpp"

namespace tracekit::funccount {

namespace {

using Counts = std::vector<std::pair<std::string, uint64_t>>;

// funccount's report: the counter's counts as a table.
class TableEngine : public session::Engine {
 public:
  TableEngine(std::unique_ptr<Counter> counter, std::optional<size_t> top,
              Style style = Style::kPerfTools)
      : counter_(std::move(counter)), top_(top), style_(style) {}
  void poll(int timeout_ms) override { counter_->poll(timeout_ms); }
  void stop() override { counter_->stop(); }
  void report(std::ostream& out, std::ostream& err) override {
    auto counts = counter_->take(err);
    out << format_table(Counts(counts.begin(), counts.end()), top_, style_);
  }

 private:
  std::unique_ptr<Counter> counter_;
  std::optional<size_t> top_;
  Style style_;
};


}  // namespace

Result<std::unique_ptr<session::Engine>> start_profiler(const std::string& tracing_dir,
                                                        const std::vector<std::string>& functions,
                                                        std::optional<size_t> top,
                                                        const std::string& lock_path,
                                                        std::optional<int> cpu) {
  std::vector<probe::Target> targets;
  for (const auto& f : functions) {
    targets.emplace_back();
    targets.back().function = f;
  }
  CounterOptions co;
  co.tool = "funccount";
  co.tracing_dir = tracing_dir;
  co.lock_path = lock_path;
  co.cpu = cpu;
  auto c = start_counter(Backend::kProfiler, targets, co, std::cerr);
  if (!c) return c.error();
  return std::unique_ptr<session::Engine>(new TableEngine(std::move(*c), top));
}

Style style_of(const Options& o) {
  const bool bcc_only = o.pid || o.cpu || o.regex || o.pattern.find(':') != std::string::npos;
  return bcc_only ? Style::kBcc : Style::kPerfTools;
}

std::string format_table(std::vector<std::pair<std::string, uint64_t>> counts,
                         std::optional<size_t> top, Style style) {
  std::erase_if(counts, [](const auto& c) { return c.second == 0; });
  std::sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  if (top && counts.size() > *top) counts.erase(counts.begin(), counts.end() - *top);
  // perf-tools' awk printf "%-30s %8d", bcc's Python "%-36s %8d".
  const int width = style == Style::kBcc ? 36 : 30;
  std::string out;
  char count[32];
  auto row = [&](std::string_view name, std::string_view value) {
    // A user function's name comes from an ELF file anyone may have built:
    // its control characters print as '?' (util/strings.hpp printable).
    size_t at = out.size();
    append_printable(out, name);
    size_t shown = out.size() - at;
    if (shown < static_cast<size_t>(width)) out.append(static_cast<size_t>(width) - shown, ' ');
    std::snprintf(count, sizeof count, " %8.*s\n", static_cast<int>(value.size()), value.data());
    out += count;
  };
  row("FUNC", "COUNT");
  for (const auto& [name, n] : counts) row(name, std::to_string(n));
  return out;
}

std::string header_line(const Options& o, size_t functions) {
  if (style_of(o) == Style::kBcc)
    return "Tracing " + std::to_string(functions) + " functions for \"" + o.pattern +
           "\"... Hit Ctrl-C to end.\n";
  std::string h = "Tracing \"" + o.pattern + "\"";
  const std::string top = o.top ? ". Top " + std::to_string(*o.top) + " only" : "";
  std::ostringstream secs;
  if (o.duration) secs << *o.duration;
  if (o.duration)
    h += " for " + secs.str() + " seconds" + top + "...\n";
  else
    h += top + "... Ctrl-C to end.\n";
  return h;
}

session::Outcome set_up(const Options& o) {
  if (o.pid && !process_exists(*o.pid))
    return 
        no_process_error(*o.pid);
  // A CPU that is not online: said as such, rather than as perf's EINVAL or
  // tracing_cpumask's EOVERFLOW.
  if (o.cpu)
    if (auto ok = perf::check_cpu_online(*o.cpu); !ok) return ok.error();
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto spec = probe::parse_spec(o.pattern);
  if (!spec) return spec.error();
  switch (spec->kind) {
    case probe::Kind::kKernel:
    case probe::Kind::kTracepoint:
    case probe::Kind::kUser:
      break;
    default:
      return Error{
          EINVAL,
          "funccount counts function entries and tracepoints: \"" + o.pattern + "\" is neither",
          {},
          "kernel functions as func or p::func, t:cat:event, lib:func"};
  }
  auto& features = kernel::Features::host();
  std::vector<Backend> ways{Backend::kEventCounters};
  if (spec->kind == probe::Kind::kKernel) {
    ways = host_kernel_function_backends(features, o.pid.has_value());
    if (ways.empty()) return no_kernel_function_backend(features, o.pid.has_value());
  } else if (!features.has(kernel::Feature::kPerfEvents)) {
    return features.missing(kernel::Feature::kPerfEvents);
  }

  probe::ExpandOptions eo;
  eo.regex = o.regex;
  eo.tracing_dir = *dir;
  auto targets = probe::expand(*spec, eo);
  if (!targets) return targets.error();
  if (targets->empty()) return probe::no_match_error(*spec);

  if (spec->kind == probe::Kind::kTracepoint)
    ways = {tracepoint_backend(*targets, features.has(kernel::Feature::kInstances))};
  if (ways.front() == Backend::kProfiler) cli::sweep_leftovers(cli::Sweep::kMount);
  CounterOptions co;
  co.tool = "funccount";
  co.tracing_dir = *dir;
  co.pid = o.pid;
  co.cpu = o.cpu;
  auto counter = start_counter(ways.front(), *targets, co, std::cerr);
  if (!counter) return counter.error();
  const Style style = style_of(o);
  session::RunOptions r;
  r.header = header_line(o, targets->size());
  r.duration = o.duration;
  r.interval = o.interval;
  r.timestamp = o.timestamp;
  if (ways.front() == Backend::kEventTracer) r.poll_ms = kEventTracerPollMs;
  r.before_report = "\n";
  r.after_report = style == Style::kBcc ? "Detaching...\n" : "\nEnding tracing...\n";
  return session::Started{std::make_unique<TableEngine>(std::move(*counter), o.top, style), r};
}

}  // namespace tracekit::funccount
