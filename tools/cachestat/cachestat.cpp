// How this works: the run chooses each role's function among the kernel's
// function names (available_filter_functions, else kallsyms), counts the
// four with the first way of counting kernel functions this kernel has
// (session/counting.hpp), and at each interval takes the counts (which
// starts them again from zero), reads /proc/meminfo and prints one row.
#include "cachestat/cachestat.hpp"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <iostream>
#include <map>
#include <sstream>

#include "cachestat/render.hpp"
#include "cli/command.hpp"
#include "cli/signals.hpp"
#include "cli/sweep.hpp"
#include "kernel/features.hpp"
#include "probe/spec.hpp"
#include "session/counting.hpp"
#include "session/run.hpp"
#include "tracefs/tracing_dir.hpp"
#include "util/strings.hpp"

namespace tracekit::cachestat {

namespace {

class Engine : public session::Engine {
 public:
  Engine(std::unique_ptr<funccount::Counter> counter, Functions f, const Options& o)
      : counter_(std::move(counter)), f_(std::move(f)), o_(o) {}
  void poll(int timeout_ms) override { counter_->poll(timeout_ms); }
  void stop() override { counter_->stop(); }
  void report(std::ostream& out, std::ostream& err) override {
    auto counts = counter_->take(err);
    auto n = [&](const std::string& name) {
      auto it = counts.find(name);
      return it == counts.end() ? 0 : it->second;
    };
    Calls c{n(f_.accessed), n(f_.buffer_dirty), n(f_.added), n(f_.dirtied)};
    Memory m;
    if (auto text = read_file("/proc/meminfo")) m = parse_meminfo(*text);
    std::string time;
    if (o_.timestamp) {
      char buf[16];
      std::time_t now = std::time(nullptr);
      std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&now));
      time = buf;
    }
    output::cachestat_row(out, time, compute(c), m, o_.debug ? &c : nullptr);
  }

 private:
  std::unique_ptr<funccount::Counter> counter_;
  Functions f_;
  Options o_;
};


}  // namespace

Result<Functions> choose_functions(const std::vector<std::string>& available) {
  auto pick = [&](std::string* out, std::vector<std::string> names, const char* role) -> Status {
    for (const auto& n : names)
      if (std::binary_search(available.begin(), available.end(), n)) {
        *out = n;
        return {};
      }
    std::string tried;
    for (const auto& n : names) tried += (tried.empty() ? "" : ", ") + n;
    return Error{
        ENOENT,
        std::string("this kernel has no function to count ") + role + " (tried " + tried + ")",
        {},
        "the page cache functions were renamed or inlined in this kernel"};
  };
  Functions f;
  if (auto s = pick(&f.accessed, {"folio_mark_accessed", "mark_page_accessed"}, "cache accesses");
      !s)
    return s.error();
  if (auto s = pick(&f.buffer_dirty, {"mark_buffer_dirty"}, "buffer writes"); !s) return s.error();
  if (auto s = pick(&f.added, {"filemap_add_folio", "add_to_page_cache_lru"}, "page additions"); !s)
    return s.error();
  if (auto s =
          pick(&f.dirtied, {"folio_account_dirtied", "account_page_dirtied", "__folio_mark_dirty"},
               "page dirties");
      !s)
    return s.error();
  return f;
}

Stats compute(const Calls& c) {
  const int64_t accesses =
      std::max<int64_t>(0, static_cast<int64_t>(c.accessed) - static_cast<int64_t>(c.buffer_dirty));
  int64_t misses =
      std::max<int64_t>(0, static_cast<int64_t>(c.added) - static_cast<int64_t>(c.dirtied));
  int64_t hits = accesses - misses;
  if (hits < 0) {
    misses = accesses;
    hits = 0;
  }
  Stats s;
  s.hits = static_cast<uint64_t>(hits);
  s.misses = static_cast<uint64_t>(misses);
  s.dirties = c.buffer_dirty;
  s.ratio = accesses > 0 ? 100.0 * static_cast<double>(hits) / static_cast<double>(accesses) : 0;
  return s;
}

Memory parse_meminfo(std::string_view text) {
  Memory m;
  for (auto line : split(text, '\n')) {
    std::vector<std::string_view> f;
    for (auto w : split(line, ' '))
      if (!w.empty()) f.push_back(w);
    if (f.size() != 3 || f[2] != "kB") continue;
    auto kb = parse_int<uint64_t>(f[1]);
    if (!kb) continue;
    if (f[0] == "Buffers:") m.buffers_mb = static_cast<double>(*kb) / 1024;
    if (f[0] == "Cached:") m.cached_mb = static_cast<double>(*kb) / 1024;
  }
  return m;
}

Result<std::unique_ptr<session::Engine>> start(funccount::Backend b, const Functions& f,
                                               const Options& o,
                                               const funccount::CounterOptions& co) {
  std::vector<probe::Target> targets;
  for (const auto* name : {&f.accessed, &f.buffer_dirty, &f.added, &f.dirtied}) {
    targets.emplace_back();
    targets.back().function = *name;
  }
  auto counter = funccount::start_counter(b, targets, co, std::cerr);
  if (!counter) return counter.error();
  return std::unique_ptr<session::Engine>(new Engine(std::move(*counter), f, o));
}

std::string header_line(const Options& o) {
  std::ostringstream s;
  s << "Counting cache functions... Output every " << o.interval << " seconds.\n";
  return s.str();
}

session::Outcome set_up(const Options& o) {
  auto& features = kernel::Features::host();
  auto ways = funccount::host_kernel_function_backends(features, /*pid=*/false);
  if (ways.empty()) return funccount::no_kernel_function_backend(features, false);
  auto dir = tracefs::tracing_dir();
  if (!dir) return dir.error();
  auto available = probe::kernel_functions(*dir);
  if (!available) return available.error();
  auto f = choose_functions(*available);
  if (!f) return f.error();

  if (ways.front() == funccount::Backend::kProfiler) cli::sweep_leftovers(cli::Sweep::kMount);
  funccount::CounterOptions co;
  co.tool = "cachestat";
  co.tracing_dir = *dir;
  auto engine = start(ways.front(), *f, o, co);
  if (!engine) return engine.error();

  std::ostringstream header;
  header << header_line(o);
  if (o.debug)
    header << "DEBUG: counting " << f->accessed << ", " << f->buffer_dirty << ", " << f->added
           << ", " << f->dirtied << " with " << funccount::backend_name(ways.front()) << ".\n";
  output::cachestat_columns(header, o.timestamp, o.debug);
  session::RunOptions r;
  r.header = header.str();
  r.interval = o.interval;
  r.after_report = "\nEnding tracing...\n";
  return session::started(std::move(engine), r);
}

}  // namespace tracekit::cachestat
