// How this works: one synthetic profile is generated up front (outside every
// timed loop) and replayed through three aggregators that do the same job:
// intern the kernel and the user stack of each event to ids, then count the
// key (pid, comm, kernel id, user id).
//
//   Tracekit  aggregate::StackTable + aggregate::CountTable
//   Std       std::unordered_map<std::vector<uint64_t>, uint32_t> + unordered_map
//   Absl      absl::flat_hash_map<std::vector<uint64_t>, uint32_t> + flat_hash_map
//
// The baselines get their best ordinary use: heterogeneous lookup by span, so
// a stack that is already there costs no copy and no allocation, as in ours.
// Std hashes with the usual boost-style hash_combine, Absl with absl::Hash.
//
// The workload: kernel stacks (0xffffffff81xxxxxx) and user stacks (a PIE
// binary at 0x55.. and libraries at 0x7f..), 10-40 frames, leaf first, sharing
// their root frames the way real stacks do (syscall entry, kthread, _start).
// A few thousand (pid, comm, kstack, ustack) signatures are drawn with a Zipf
// distribution, so most events repeat a hot stack. Events point into one pool
// of frames instead of carrying copies: in the tools the frames come from a
// perf ring buffer the kernel has just written, which is cache-hot too.
//
// BM_Memory_* intern 10,000 distinct stacks and count one key each, and report
// the peak heap bytes (counted by the operator new below) per stack.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <span>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "aggregate/count_table.hpp"
#include "aggregate/stack_table.hpp"

// --- Heap accounting (only while g_track is set) ----------------------------

namespace {
bool g_track = false;
size_t g_live = 0;
size_t g_peak = 0;

void* counted_alloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  if (g_track) {
    g_live += malloc_usable_size(p);
    g_peak = std::max(g_peak, g_live);
  }
  return p;
}

void* counted_aligned_alloc(size_t n, std::align_val_t al) {
  const auto a = static_cast<size_t>(al);
  void* p = std::aligned_alloc(a, (std::max<size_t>(n, 1) + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  if (g_track) {
    g_live += malloc_usable_size(p);
    g_peak = std::max(g_peak, g_live);
  }
  return p;
}

void counted_free(void* p) {
  if (p == nullptr) return;
  if (g_track) g_live -= std::min(g_live, malloc_usable_size(p));
  std::free(p);
}
}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }
void* operator new(size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return counted_aligned_alloc(n, a); }
void operator delete(void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { counted_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { counted_free(p); }

namespace tracekit::aggregate {
// absl::Hash finds this by argument-dependent lookup.
template <class H>
H AbslHashValue(H h, const StackKey& k) {
  return H::combine(std::move(h), k.pid, k.comm, k.kernel, k.user);
}
}  // namespace tracekit::aggregate

namespace {

using tracekit::aggregate::CountTable;
using tracekit::aggregate::kNoStack;
using tracekit::aggregate::StackId;
using tracekit::aggregate::StackKey;
using tracekit::aggregate::StackTable;
using Frames = std::span<const uint64_t>;
using Stack = std::vector<uint64_t>;

// --- Workload ----------------------------------------------------------------

constexpr size_t kKernelStacks = 2000;
constexpr size_t kUserStacks = 3000;
constexpr size_t kSignatures = 5000;
constexpr size_t kProcesses = 64;
constexpr size_t kEvents = 1 << 20;
constexpr double kZipfExponent = 1.0;

struct Event {
  uint32_t pid;
  uint32_t comm;
  int32_t kstack;  // index into Workload::kstacks
  int32_t ustack;  // index into Workload::ustacks, -1 for none (kernel thread)
};

struct Workload {
  std::vector<Stack> kstacks;
  std::vector<Stack> ustacks;
  std::vector<Event> events;
};

// Function start addresses in a text range, 16-byte aligned.
std::vector<uint64_t> functions(std::mt19937_64& rng, uint64_t base, uint64_t span, size_t n) {
  std::vector<uint64_t> f(n);
  for (auto& a : f) a = base + (rng() % span & ~uint64_t{15});
  return f;
}

// A leaf-first stack of 10-40 frames: one of a few shared root chains, then
// random callees. A frame is a return address, a little past a function start.
Stack make_stack(std::mt19937_64& rng, const std::vector<Stack>& roots,
                 const std::vector<uint64_t>& funcs) {
  const size_t depth = 10 + rng() % 31;
  Stack s = roots[rng() % roots.size()];
  while (s.size() < depth) s.push_back(funcs[rng() % funcs.size()] + 5 + rng() % 400);
  s.resize(depth);
  std::reverse(s.begin(), s.end());
  return s;
}

std::vector<Stack> make_roots(std::mt19937_64& rng, const std::vector<uint64_t>& funcs) {
  std::vector<Stack> roots(6);
  for (auto& r : roots) {
    r.resize(3 + rng() % 4);
    for (auto& f : r) f = funcs[rng() % funcs.size()] + 5 + rng() % 400;
  }
  return roots;
}

// Zipf-distributed ranks in [0, n) by inverting the CDF.
class Zipf {
 public:
  Zipf(size_t n, double s) : cdf_(n) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf_[i] = sum += 1.0 / std::pow(double(i + 1), s);
    for (auto& c : cdf_) c /= sum;
  }
  size_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    return std::min<size_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin(),
                            cdf_.size() - 1);
  }

 private:
  std::vector<double> cdf_;
};

Workload make_workload() {
  std::mt19937_64 rng(20240601);
  Workload w;
  const auto kfuncs = functions(rng, 0xffffffff81000000, 0x1000000, 6000);
  const auto ufuncs_exe = functions(rng, 0x55d4c0a00000, 0x400000, 2000);
  const auto ufuncs_lib = functions(rng, 0x7f3a1c000000, 0x2000000, 4000);
  std::vector<uint64_t> ufuncs = ufuncs_exe;
  ufuncs.insert(ufuncs.end(), ufuncs_lib.begin(), ufuncs_lib.end());
  const auto kroots = make_roots(rng, kfuncs);
  const auto uroots = make_roots(rng, ufuncs);
  for (size_t i = 0; i < kKernelStacks; ++i) w.kstacks.push_back(make_stack(rng, kroots, kfuncs));
  for (size_t i = 0; i < kUserStacks; ++i) w.ustacks.push_back(make_stack(rng, uroots, ufuncs));

  std::vector<Event> signatures(kSignatures);
  for (auto& s : signatures) {
    const auto proc = static_cast<uint32_t>(rng() % kProcesses);
    s.pid = 1000 + proc * 37;
    s.comm = proc % 40;  // some processes share a name
    s.kstack = static_cast<int32_t>(rng() % kKernelStacks);
    s.ustack = rng() % 5 == 0 ? -1 : static_cast<int32_t>(rng() % kUserStacks);
  }
  const Zipf zipf(kSignatures, kZipfExponent);
  w.events.reserve(kEvents);
  for (size_t i = 0; i < kEvents; ++i) w.events.push_back(signatures[zipf(rng)]);
  return w;
}

const Workload& workload() {
  static const Workload w = make_workload();
  return w;
}

// --- The three aggregators ---------------------------------------------------

class TracekitAgg {
 public:
  void add(uint32_t pid, uint32_t comm, Frames k, const Frames* u) {
    const StackId kid = stacks_.intern(k);
    const StackId uid = u != nullptr ? stacks_.intern(*u) : kNoStack;
    counts_.add(StackKey{pid, comm, kid, uid});
  }
  size_t stacks() const { return stacks_.size(); }
  size_t keys() const { return counts_.size(); }

 private:
  StackTable stacks_{1 << 20};
  CountTable counts_{1 << 20};
};

// Transparent span hash/equality, so lookups need no temporary vector.
struct ComboHash {
  using is_transparent = void;
  size_t operator()(Frames s) const {
    size_t h = s.size();
    for (uint64_t f : s) h ^= std::hash<uint64_t>{}(f) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2);
    return h;
  }
  size_t operator()(const StackKey& k) const {
    size_t h = k.pid;
    for (uint64_t f :
         {uint64_t(k.comm), uint64_t(uint32_t(k.kernel)), uint64_t(uint32_t(k.user))}) {
      h ^= std::hash<uint64_t>{}(f) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2);
    }
    return h;
  }
};
struct AbslSpanHash {
  using is_transparent = void;
  size_t operator()(Frames s) const {
    return absl::Hash<absl::Span<const uint64_t>>{}(absl::MakeConstSpan(s.data(), s.size()));
  }
};
struct SpanEq {
  using is_transparent = void;
  bool operator()(Frames a, Frames b) const { return std::ranges::equal(a, b); }
};

template <class StackMap, class CountMap>
class MapAgg {
 public:
  void add(uint32_t pid, uint32_t comm, Frames k, const Frames* u) {
    const StackId kid = intern(k);
    const StackId uid = u != nullptr ? intern(*u) : kNoStack;
    ++counts_[StackKey{pid, comm, kid, uid}];
  }
  size_t stacks() const { return stacks_.size(); }
  size_t keys() const { return counts_.size(); }

 private:
  StackId intern(Frames f) {
    if (auto it = stacks_.find(f); it != stacks_.end()) return it->second;
    const auto id = static_cast<StackId>(stacks_.size());
    stacks_.emplace(Stack(f.begin(), f.end()), id);
    return id;
  }
  StackMap stacks_;
  CountMap counts_;
};

using StdAgg = MapAgg<std::unordered_map<Stack, StackId, ComboHash, SpanEq>,
                      std::unordered_map<StackKey, uint64_t, ComboHash>>;
using AbslAgg = MapAgg<absl::flat_hash_map<Stack, StackId, AbslSpanHash, SpanEq>,
                       absl::flat_hash_map<StackKey, uint64_t>>;

// --- Benchmarks --------------------------------------------------------------

// Replays the whole event stream into fresh tables each iteration: one
// profiling session, first sightings included.
template <class Agg>
void BM_Events(benchmark::State& state) {
  const Workload& w = workload();
  size_t stacks = 0, keys = 0;
  for (auto _ : state) {
    Agg agg;
    for (const Event& e : w.events) {
      const Frames k = w.kstacks[e.kstack];
      if (e.ustack >= 0) {
        const Frames u = w.ustacks[e.ustack];
        agg.add(e.pid, e.comm, k, &u);
      } else {
        agg.add(e.pid, e.comm, k, nullptr);
      }
    }
    stacks = agg.stacks();
    keys = agg.keys();
    benchmark::DoNotOptimize(stacks);
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(w.events.size()));
  state.counters["distinct_stacks"] = double(stacks);
  state.counters["distinct_keys"] = double(keys);
}

// Peak heap while storing 10,000 distinct stacks (10-40 frames, 25 on
// average) and one count key per stack.
template <class Agg>
void BM_Memory(benchmark::State& state) {
  constexpr size_t kDistinct = 10000;
  std::mt19937_64 rng(7);
  const auto funcs = functions(rng, 0xffffffff81000000, 0x1000000, 6000);
  const auto roots = make_roots(rng, funcs);
  std::vector<Stack> pool;
  for (size_t i = 0; i < kDistinct; ++i) pool.push_back(make_stack(rng, roots, funcs));
  size_t frames = 0;
  for (const auto& s : pool) frames += s.size();

  size_t peak = 0, stacks = 0;
  for (auto _ : state) {
    g_live = g_peak = 0;
    g_track = true;
    {
      Agg agg;
      for (size_t i = 0; i < pool.size(); ++i) agg.add(uint32_t(i), 0, pool[i], nullptr);
      stacks = agg.stacks();
      benchmark::DoNotOptimize(stacks);
    }
    g_track = false;
    peak = g_peak;
  }
  state.counters["distinct_stacks"] = double(stacks);
  state.counters["peak_KiB"] = double(peak) / 1024;
  state.counters["bytes_per_stack"] = double(peak) / double(kDistinct);
  state.counters["frame_bytes_per_stack"] = double(frames * 8) / double(kDistinct);
}

BENCHMARK_TEMPLATE(BM_Events, TracekitAgg)
    ->Name("BM_Events/Tracekit")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, StdAgg)
    ->Name("BM_Events/StdUnorderedMap")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, AbslAgg)
    ->Name("BM_Events/AbslFlatHashMap")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Memory, TracekitAgg)->Name("BM_Memory/Tracekit")->Iterations(3);
BENCHMARK_TEMPLATE(BM_Memory, StdAgg)->Name("BM_Memory/StdUnorderedMap")->Iterations(3);
BENCHMARK_TEMPLATE(BM_Memory, AbslAgg)->Name("BM_Memory/AbslFlatHashMap")->Iterations(3);

}  // namespace

BENCHMARK_MAIN();
