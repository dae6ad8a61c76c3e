// How this works: one synthetic profile of 100,000 unique stacks is made up
// front: 10-40 frames each, a process name first (one of 20), then frames
// drawn from 3,000 function names, the first few from a smaller set of "root"
// functions so that stacks share their bottoms as real ones do (main,
// start_thread, syscall entry); values Zipf-like (the k-th stack about
// 1,000,000 / k^1.1). Then:
//
//   BM_FoldedToSvg   folded text -> parse_folded_line -> FlameGraph -> SVG
//                    (what `tracekit flamegraph` does, file reading aside)
//   BM_Build         FlameGraph::add alone (parsing and interning)
//   BM_Render        render_flamegraph alone: the merge (a sort of the
//                    stacks) and the SVG
//   BM_ReportToSvg   write_flamegraph on a Report of 100,000 records (the
//                    `-o FILE.svg` path: merge_same_text, folded_frames)
//
// Counters: the SVG's size in MB, frames drawn and pruned. The goal: under
// 1 s and under 5 MB.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "output/flamegraph.hpp"
#include "output/folded_input.hpp"
#include "report/report.hpp"

namespace {

using namespace tracekit;

constexpr size_t kStacks = 100000;

struct Profile {
  std::vector<std::vector<std::string>> stacks;  // root first
  std::vector<uint64_t> values;
  std::string folded;
};

const Profile& profile() {
  static const Profile p = [] {
    Profile p;
    std::mt19937_64 rng(42);
    std::vector<std::string> names, comms;
    for (int i = 0; i < 3000; ++i)
      names.push_back((i % 3 == 0 ? "ns::module" + std::to_string(i % 40) + "::fn_" : "func_") +
                      std::to_string(i));
    for (int i = 0; i < 20; ++i) comms.push_back("proc" + std::to_string(i));
    std::uniform_int_distribution<int> depth(10, 40), root(0, 29), any(0, 2999), comm(0, 19);
    std::set<std::vector<std::string>> seen;
    while (p.stacks.size() < kStacks) {
      std::vector<std::string> s = {comms[comm(rng)]};
      int d = depth(rng);
      for (int i = 0; i < d; ++i) s.push_back(names[i < 3 ? root(rng) : any(rng)]);
      if (!seen.insert(s).second) continue;
      p.stacks.push_back(std::move(s));
    }
    for (size_t k = 0; k < kStacks; ++k)
      p.values.push_back(static_cast<uint64_t>(1e6 / std::pow(static_cast<double>(k + 1), 1.1)) +
                         1);
    for (size_t k = 0; k < kStacks; ++k) {
      for (size_t i = 0; i < p.stacks[k].size(); ++i) p.folded += (i ? ";" : "") + p.stacks[k][i];
      p.folded += " " + std::to_string(p.values[k]) + "\n";
    }
    return p;
  }();
  return p;
}

void add_folded(output::FlameGraph& g, std::string_view text) {
  std::vector<output::FlameFrame> frames;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    uint64_t n = 0;
    if (output::parse_folded_line(text.substr(0, nl), &frames, &n)) g.add(frames, n);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  }
}

void counters(benchmark::State& state, const output::FlameStats& s) {
  state.counters["MB"] = static_cast<double>(s.bytes) / 1e6;
  state.counters["drawn"] = static_cast<double>(s.frames_drawn);
  state.counters["pruned"] = static_cast<double>(s.frames_pruned);
  state.counters["stacks"] = static_cast<double>(s.stacks);
}

void BM_FoldedToSvg(benchmark::State& state) {
  const Profile& p = profile();
  output::FlameStats s;
  for (auto _ : state) {
    output::FlameGraph g;
    add_folded(g, p.folded);
    std::ostringstream out;
    s = output::render_flamegraph(out, g, {});
    benchmark::DoNotOptimize(out.str().size());
  }
  counters(state, s);
}
BENCHMARK(BM_FoldedToSvg)->Unit(benchmark::kMillisecond);

void BM_Build(benchmark::State& state) {
  const Profile& p = profile();
  for (auto _ : state) {
    output::FlameGraph g;
    add_folded(g, p.folded);
    benchmark::DoNotOptimize(g.total());
  }
}
BENCHMARK(BM_Build)->Unit(benchmark::kMillisecond);

void BM_Render(benchmark::State& state) {
  output::FlameGraph g;
  add_folded(g, profile().folded);
  output::FlameStats s;
  for (auto _ : state) {
    std::ostringstream out;
    s = output::render_flamegraph(out, g, {});
    benchmark::DoNotOptimize(out.str().size());
  }
  counters(state, s);
}
BENCHMARK(BM_Render)->Unit(benchmark::kMillisecond);

void BM_ReportToSvg(benchmark::State& state) {
  const Profile& p = profile();
  report::Report r;
  r.tool = "profile";
  r.command = "profile -F 99 10";
  r.host = "bench";
  for (size_t k = 0; k < kStacks; ++k) {
    report::Record rec;
    rec.comm = p.stacks[k][0];
    rec.pid = 1000 + static_cast<int64_t>(k % 20);
    std::vector<report::Frame> frames;
    for (size_t i = p.stacks[k].size() - 1; i > 0; --i)  // leaf first
      frames.push_back({0x400000 + i, p.stacks[k][i], 0, -1});
    rec.user = r.frames.stack(std::move(frames));
    rec.value = p.values[k];
    r.records.push_back(std::move(rec));
  }
  output::FlameStats s;
  for (auto _ : state) {
    std::ostringstream out;
    s = output::write_flamegraph(out, r);
    benchmark::DoNotOptimize(out.str().size());
  }
  counters(state, s);
}
BENCHMARK(BM_ReportToSvg)->Unit(benchmark::kMillisecond);

}  // namespace
BENCHMARK_MAIN();
