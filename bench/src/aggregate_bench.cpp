// How this works: one synthetic profile is generated up front (outside every
// timed loop) and replayed through aggregators that do the same job as the
// tools: from each event's (pid, process name, kernel frames, user frames),
// a total per distinct (pid, name, kernel stack, user stack), with the
// stacks stored once.
//
//   Tracekit           aggregate::StackCounts::add, the call profile and
//                      stackcount make per event (the signature table in
//                      front of the stack, name and count tables)
//   TracekitTables     the tables without the signature table: intern the
//                      name and both stacks, then count the key of ids (what
//                      StackCounts::add did before; offcputime's path)
//   StdTwoLevel        the same two levels with std::unordered_map: name ->
//                      id, stack -> id, key of ids -> total
//   AbslTwoLevel       the same with absl::flat_hash_map
//   StdSingleKey       one std::unordered_map keyed by the whole signature
//                      (pid, name, kernel frames, user frames) -> total
//   AbslSingleKey      the same with absl::flat_hash_map
//   FloorRead          not an aggregator: reads every frame once, stores
//                      nothing (no exact aggregator can be faster)
//   FloorCompare       add() without the lookup: an oracle (the benchmark's
//                      own signature numbers) hands it each event's stored
//                      record, which it compares and counts
//   FloorLookup        add() with the quick hash handed over by the oracle:
//                      the slot, the compare and the total
//   FloorKeyed         FloorLookup whose handed-over hash waits for the
//                      first frame of each stack, as a hash of the key must
//   FloorHash          not an aggregator: only SignatureTable::full_hash,
//                      every frame hashed (StackCounts::add's first pass
//                      until it hashed a sample of the frames instead)
//
// The baselines get their best ordinary use: heterogeneous lookup by
// string_view and span, so an event already seen costs no copy and no
// allocation, as in ours. Std hashes with the usual boost-style
// hash_combine, Absl with absl::Hash.
//
// The workload: kernel stacks (0xffffffff81xxxxxx) and user stacks (a PIE
// binary at 0x55.. and libraries at 0x7f..), 10-40 frames, leaf first, sharing
// their root frames the way real stacks do (syscall entry, kthread, _start).
// A few thousand (pid, comm, kstack, ustack) signatures are drawn with a Zipf
// distribution, so most events repeat a hot stack. Each event's frames are
// laid out one event after the other in one buffer that is read front to
// back, as the tools read a perf ring buffer: 65,536 events (about 24 MB of
// frames, more than the caches hold), replayed 16 times (BM_Events).
// BM_EventsPool replays the same events with each event's frames read from
// the one copy of its stack (about 1 MB), the first version's workload.
//
// BM_Memory/*/N store N distinct stacks (10,000 and 100,000) with one count
// key each, and report the peak heap bytes (counted by the operator new
// below) per stack.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "aggregate/stack_counts.hpp"

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

using tracekit::aggregate::kNoStack;
using tracekit::aggregate::StackCounts;
using tracekit::aggregate::StackId;
using tracekit::aggregate::StackKey;
using Frames = std::span<const uint64_t>;
using Stack = std::vector<uint64_t>;

// --- Workload ----------------------------------------------------------------

constexpr size_t kKernelStacks = 2000;
constexpr size_t kUserStacks = 3000;
constexpr size_t kSignatures = 5000;
constexpr size_t kProcesses = 64;
constexpr size_t kComms = 40;
constexpr size_t kEvents = 1 << 20;
constexpr size_t kRingEvents = 1 << 16;
constexpr double kZipfExponent = 1.0;

struct Event {
  uint32_t pid;
  uint32_t comm;
  int32_t kstack;  // index into Workload::kstacks
  int32_t ustack;  // index into Workload::ustacks, -1 for none (kernel thread)
  uint32_t at = 0;  // the kernel frames' index in Workload::ring, the user frames' after
  uint16_t kframes = 0, uframes = 0;
  uint32_t sig = 0;  // the signature's number (OracleAgg's)
};

struct Workload {
  std::vector<std::string> comms;  // indexed by Event::comm
  std::vector<Stack> kstacks;
  std::vector<Stack> ustacks;
  std::vector<Event> events;
  std::vector<uint64_t> ring;  // the frames of every event, in event order
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

  const char* const kNames[] = {"bash", "sshd", "kworker/0:1", "postgres", "java", "node",
                                "systemd-journal", "containerd-shim", "nginx", "python3"};
  for (size_t i = 0; i < kComms; ++i)
    w.comms.push_back(std::string(kNames[i % 10]) + (i < 10 ? "" : "-" + std::to_string(i)));
  std::vector<Event> signatures(kSignatures);
  for (auto& s : signatures) {
    const auto proc = static_cast<uint32_t>(rng() % kProcesses);
    s.pid = 1000 + proc * 37;
    s.comm = proc % kComms;  // some processes share a name
    s.kstack = static_cast<int32_t>(rng() % kKernelStacks);
    s.ustack = rng() % 5 == 0 ? -1 : static_cast<int32_t>(rng() % kUserStacks);
  }
  const Zipf zipf(kSignatures, kZipfExponent);
  w.events.reserve(kRingEvents);
  for (size_t i = 0; i < kRingEvents; ++i) {
    const size_t sig = zipf(rng);
    Event e = signatures[sig];
    e.sig = static_cast<uint32_t>(sig);
    e.at = static_cast<uint32_t>(w.ring.size());
    e.kframes = static_cast<uint16_t>(w.kstacks[e.kstack].size());
    e.uframes = e.ustack >= 0 ? static_cast<uint16_t>(w.ustacks[e.ustack].size()) : 0;
    w.ring.insert(w.ring.end(), w.kstacks[e.kstack].begin(), w.kstacks[e.kstack].end());
    if (e.ustack >= 0)
      w.ring.insert(w.ring.end(), w.ustacks[e.ustack].begin(), w.ustacks[e.ustack].end());
    w.events.push_back(e);
  }
  return w;
}

const Workload& workload() {
  static const Workload w = make_workload();
  return w;
}

// --- The aggregators ------------------------------------------------------

class TracekitAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    counts_.add(pid, comm, k, u != nullptr ? std::optional<Frames>(*u) : std::nullopt, 1);
  }
  size_t stacks() const { return counts_.stacks.size(); }
  size_t keys() const { return counts_.counts.size(); }
  StackCounts& counts() { return counts_; }

 private:
  StackCounts counts_{1 << 20, 1 << 20};
};

// Floors, not aggregators: what any exact aggregator must at least do per
// event. FloorRead reads every frame and name byte once (xor-summed);
// FloorHash hashes every frame of the signature, as StackCounts::add did
// before its quick hash (the cost that change removed). Neither stores
// anything.
class FloorReadAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    uint64_t x = pid ^ comm.size() ^ static_cast<unsigned char>(comm.empty() ? 0 : comm[0]);
    for (uint64_t f : k) x ^= f;
    if (u != nullptr)
      for (uint64_t f : *u) x ^= f;
    sink_ += x;
  }
  size_t stacks() const { return 0; }
  size_t keys() const { return sink_ == 0; }

 private:
  uint64_t sink_ = 0;
};

class FloorHashAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    sink_ += tracekit::aggregate::SignatureTable::full_hash({pid, comm, k, u != nullptr ? *u : Frames()});
  }
  size_t stacks() const { return 0; }
  size_t keys() const { return sink_ == 0; }

 private:
  uint64_t sink_ = 0;
};

// The oracle of FloorCompare and FloorLookup: the benchmark's own number
// for each event's signature, handed over before each add() (BM_Events
// calls locate() on aggregators that have it). No tool has it.
class OracleAgg {
 public:
  void locate(uint32_t sig) { sig_ = sig; }

 protected:
  static tracekit::aggregate::Signature signature(uint32_t pid, std::string_view comm, Frames k,
                                                  const Frames* u) {
    return {pid, comm, k, u != nullptr ? *u : Frames()};
  }
  uint32_t sig_ = 0;
};

// FloorCompare: Tracekit's add() without the lookup. The oracle hands it
// the record stored for the event's signature, in SignatureTable's layout,
// staged in first-seen order like add()'s; it makes the same exact compare
// (SignatureTable::match) and adds to a dense total. What add() spends
// beyond it is the quick hash and the slot; what it spends beyond FloorRead
// is reading the stored record and adding to the total.
class FloorCompareAgg : public OracleAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    using tracekit::aggregate::SignatureTable;
    const auto s = signature(pid, comm, k, u);
    const uint64_t*& r = records_[sig_];
    if (r == nullptr) {
      r = table_.stage(s).record;
      ++keys_;
    }
    if (SignatureTable::match(r, s) == SignatureTable::kAbsent) std::abort();
    ++totals_[sig_];
  }
  size_t stacks() const { return 0; }
  size_t keys() const { return keys_; }

 private:
  tracekit::aggregate::SignatureTable table_;
  std::vector<const uint64_t*> records_ = std::vector<const uint64_t*>(kSignatures, nullptr);
  std::vector<uint64_t> totals_ = std::vector<uint64_t>(kSignatures, 0);
  size_t keys_ = 0;
};

// FloorLookup: Tracekit's add() with the quick hash handed over by the
// oracle (computed at the signature's first event, then remembered by its
// number): the slot, the compare and the total, as add() makes them; a new
// signature goes through add() itself. What add() spends beyond it is
// computing the quick hash, whose loads are the first touches of the
// event's frames; the slot and the record it finds can only be loaded
// after those.
//
// FloorKeyed (kWait): the same, but the handed-over hash waits for the
// first frame of each of the event's stacks (a data dependency the
// processor cannot speculate past), as the hash of any table keyed by the
// event's content must read each part of the key before its slot can be
// loaded. On the pool workload those loads are cache misses of their own;
// on the ring they are the first line of the event and the line where its
// user stack starts.
template <bool kWait>
class FloorLookupAgg : public OracleAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    using tracekit::aggregate::SignatureTable;
    const auto s = signature(pid, comm, k, u);
    std::optional<uint64_t>& h = hashes_[sig_];
    if (!h) h = SignatureTable::hash(s);
    uint64_t hash = *h;
    // No xor of two frames is this value, so this adds 0, computed from the
    // frames' values (a compare and a set, no branch).
    if constexpr (kWait) {
      const uint64_t first_k = k.empty() ? 0 : k[0];
      const uint64_t first_u = u == nullptr || u->empty() ? 0 : (*u)[0];
      hash += static_cast<uint64_t>((first_k ^ first_u) == 0x5a5a5a5a5a5a5a5a);
    }
    const uint32_t key = tables_.counts().signatures.find(s, hash);
    if (key == SignatureTable::kAbsent) return tables_.add(pid, comm, k, u);
    tables_.counts().counts.add_at(key, 1);
  }
  size_t stacks() const { return tables_.stacks(); }
  size_t keys() const { return tables_.keys(); }

 private:
  TracekitAgg tables_;
  std::vector<std::optional<uint64_t>> hashes_ =
      std::vector<std::optional<uint64_t>>(kSignatures);
};

class TracekitTablesAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    const StackKey key{pid, counts_.comms.intern(comm), counts_.side(k),
                       u != nullptr ? counts_.side(*u) : kNoStack};
    counts_.counts.add(key, 1);
  }
  size_t stacks() const { return counts_.stacks.size(); }
  size_t keys() const { return counts_.counts.size(); }

 private:
  StackCounts counts_{1 << 20, 1 << 20};
};

inline size_t combine(size_t h, uint64_t v) {
  return h ^ (std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15 + (h << 6) + (h >> 2));
}

// Transparent span hash/equality, so lookups need no temporary vector.
struct ComboHash {
  using is_transparent = void;
  size_t operator()(Frames s) const {
    size_t h = s.size();
    for (uint64_t f : s) h = combine(h, f);
    return h;
  }
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  size_t operator()(const StackKey& k) const {
    size_t h = k.pid;
    for (uint64_t f :
         {uint64_t(k.comm), uint64_t(uint32_t(k.kernel)), uint64_t(uint32_t(k.user))}) {
      h = combine(h, f);
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
// absl::string_view is not std::string_view in every build of absl.
inline absl::string_view absl_view(std::string_view s) { return {s.data(), s.size()}; }
struct AbslStrHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return absl::Hash<absl::string_view>{}(absl_view(s)); }
};
struct SpanEq {
  using is_transparent = void;
  bool operator()(Frames a, Frames b) const { return std::ranges::equal(a, b); }
};

template <class NameMap, class StackMap, class CountMap>
class TwoLevelAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    const StackId kid = intern(k);
    const StackId uid = u != nullptr ? intern(*u) : kNoStack;
    ++counts_[StackKey{pid, name(comm), kid, uid}];
  }
  size_t stacks() const { return stacks_.size(); }
  size_t keys() const { return counts_.size(); }

 private:
  uint32_t name(std::string_view s) {
    if (auto it = names_.find(s); it != names_.end()) return it->second;
    const auto id = static_cast<uint32_t>(names_.size());
    names_.emplace(std::string(s), id);
    return id;
  }
  StackId intern(Frames f) {
    if (f.empty()) return kNoStack;
    if (auto it = stacks_.find(f); it != stacks_.end()) return it->second;
    const auto id = static_cast<StackId>(stacks_.size());
    stacks_.emplace(Stack(f.begin(), f.end()), id);
    return id;
  }
  NameMap names_;
  StackMap stacks_;
  CountMap counts_;
};

using StdTwoLevelAgg =
    TwoLevelAgg<std::unordered_map<std::string, uint32_t, ComboHash, std::equal_to<>>,
                std::unordered_map<Stack, StackId, ComboHash, SpanEq>,
                std::unordered_map<StackKey, uint64_t, ComboHash>>;
using AbslTwoLevelAgg = TwoLevelAgg<absl::flat_hash_map<std::string, uint32_t, AbslStrHash, std::equal_to<>>,
                                    absl::flat_hash_map<Stack, StackId, AbslSpanHash, SpanEq>,
                                    absl::flat_hash_map<StackKey, uint64_t>>;

// The whole signature as one key; SigView is its lookup form.
struct Sig {
  uint32_t pid;
  std::string comm;
  Stack kernel, user;
};
struct SigView {
  uint32_t pid;
  std::string_view comm;
  Frames kernel, user;
  SigView(uint32_t p, std::string_view c, Frames k, Frames u) : pid(p), comm(c), kernel(k), user(u) {}
  SigView(const Sig& s) : pid(s.pid), comm(s.comm), kernel(s.kernel), user(s.user) {}  // NOLINT
};
struct SigHash {
  using is_transparent = void;
  size_t operator()(const SigView& s) const {
    size_t h = combine(s.pid, std::hash<std::string_view>{}(s.comm));
    h = combine(h, s.kernel.size());
    for (uint64_t f : s.kernel) h = combine(h, f);
    h = combine(h, s.user.size());
    for (uint64_t f : s.user) h = combine(h, f);
    return h;
  }
};
struct AbslSigHash {
  using is_transparent = void;
  size_t operator()(const SigView& s) const {
    return absl::HashOf(s.pid, absl_view(s.comm), absl::MakeConstSpan(s.kernel.data(), s.kernel.size()),
                        absl::MakeConstSpan(s.user.data(), s.user.size()));
  }
};
struct SigEq {
  using is_transparent = void;
  bool operator()(const SigView& a, const SigView& b) const {
    return a.pid == b.pid && a.comm == b.comm && std::ranges::equal(a.kernel, b.kernel) &&
           std::ranges::equal(a.user, b.user);
  }
};

// Stacks are interned only for a new signature, to count distinct stacks
// (the report needs them by id); that is per key, not per event.
template <class SigMap>
class SingleKeyAgg {
 public:
  void add(uint32_t pid, std::string_view comm, Frames k, const Frames* u) {
    const SigView v(pid, comm, k, u != nullptr ? *u : Frames());
    if (auto it = totals_.find(v); it != totals_.end()) {
      ++it->second;
      return;
    }
    totals_.emplace(Sig{pid, std::string(comm), Stack(k.begin(), k.end()),
                        u != nullptr ? Stack(u->begin(), u->end()) : Stack()},
                    1);
  }
  size_t stacks() const {
    std::unordered_set<Frames, ComboHash, SpanEq> distinct;
    for (const auto& [sig, total] : totals_) {
      if (!sig.kernel.empty()) distinct.insert(Frames(sig.kernel));
      if (!sig.user.empty()) distinct.insert(Frames(sig.user));
    }
    return distinct.size();
  }
  size_t keys() const { return totals_.size(); }

 private:
  SigMap totals_;
};

using StdSingleKeyAgg = SingleKeyAgg<std::unordered_map<Sig, uint64_t, SigHash, SigEq>>;
using AbslSingleKeyAgg = SingleKeyAgg<absl::flat_hash_map<Sig, uint64_t, AbslSigHash, SigEq>>;

// --- Benchmarks --------------------------------------------------------------

// Replays the whole event stream into fresh tables each iteration: one
// profiling session, first sightings included. kRing: each event's frames
// read from the ring-like buffer (BM_Events); else from the stacks
// themselves, one copy of each, about 1 MB in all (BM_EventsPool: the
// workload of the first version of this benchmark, whose frames stay in
// cache).
template <class Agg, bool kRing>
void BM_Events(benchmark::State& state) {
  const Workload& w = workload();
  size_t stacks = 0, keys = 0;
  for (auto _ : state) {
    Agg agg;
    for (size_t rep = 0; rep < kEvents / kRingEvents; ++rep) {
      for (const Event& e : w.events) {
        const std::string_view comm = w.comms[e.comm];
        if constexpr (requires { agg.locate(e.sig); }) agg.locate(e.sig);
        if constexpr (kRing) {
          const Frames k(w.ring.data() + e.at, e.kframes);
          if (e.ustack >= 0) {
            const Frames u(k.data() + k.size(), e.uframes);
            agg.add(e.pid, comm, k, &u);
          } else {
            agg.add(e.pid, comm, k, nullptr);
          }
        } else {
          const Frames k = w.kstacks[e.kstack];
          if (e.ustack >= 0) {
            const Frames u = w.ustacks[e.ustack];
            agg.add(e.pid, comm, k, &u);
          } else {
            agg.add(e.pid, comm, k, nullptr);
          }
        }
      }
    }
    keys = agg.keys();
    benchmark::DoNotOptimize(keys);
    state.PauseTiming();
    stacks = agg.stacks();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(int64_t(state.iterations()) * int64_t(kEvents));
  state.counters["distinct_stacks"] = double(stacks);
  state.counters["distinct_keys"] = double(keys);
}

// Peak heap while storing N distinct stacks (10-40 frames, 25 on average)
// and one count key per stack (pid i, one process name).
template <class Agg>
void BM_Memory(benchmark::State& state) {
  const auto distinct = static_cast<size_t>(state.range(0));
  std::mt19937_64 rng(7);
  const auto funcs = functions(rng, 0xffffffff81000000, 0x1000000, 6000);
  const auto roots = make_roots(rng, funcs);
  std::vector<Stack> pool;
  for (size_t i = 0; i < distinct; ++i) pool.push_back(make_stack(rng, roots, funcs));
  size_t frames = 0;
  for (const auto& s : pool) frames += s.size();

  size_t peak = 0, stacks = 0;
  for (auto _ : state) {
    g_live = g_peak = 0;
    g_track = true;
    {
      Agg agg;
      for (size_t i = 0; i < pool.size(); ++i) agg.add(uint32_t(i), "bench", pool[i], nullptr);
        g_track = false;
      stacks = agg.stacks();
      benchmark::DoNotOptimize(stacks);
    }
    peak = g_peak;
  }
  state.counters["distinct_stacks"] = double(stacks);
  state.counters["peak_KiB"] = double(peak) / 1024;
  state.counters["bytes_per_stack"] = double(peak) / double(distinct);
  state.counters["frame_bytes_per_stack"] = double(frames * 8) / double(distinct);
}

#define AGG_BENCH(name, agg)                                                                    \
  BENCHMARK_TEMPLATE(BM_Events, agg, true)->Name("BM_Events/" name)->Unit(benchmark::kMillisecond); \
  BENCHMARK_TEMPLATE(BM_Events, agg, false)                                                     \
      ->Name("BM_EventsPool/" name)                                                             \
      ->Unit(benchmark::kMillisecond);                                                          \
  BENCHMARK_TEMPLATE(BM_Memory, agg)                                                            \
      ->Name("BM_Memory/" name)                                                                 \
      ->Arg(10000)                                                                              \
      ->Arg(100000)                                                                             \
      ->Iterations(1)
AGG_BENCH("Tracekit", TracekitAgg);
AGG_BENCH("TracekitTables", TracekitTablesAgg);
BENCHMARK_TEMPLATE(BM_Events, FloorReadAgg, true)->Name("BM_Events/FloorRead")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorReadAgg, false)->Name("BM_EventsPool/FloorRead")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorCompareAgg, true)->Name("BM_Events/FloorCompare")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorCompareAgg, false)->Name("BM_EventsPool/FloorCompare")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorLookupAgg<false>, true)->Name("BM_Events/FloorLookup")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorLookupAgg<false>, false)->Name("BM_EventsPool/FloorLookup")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorLookupAgg<true>, true)->Name("BM_Events/FloorKeyed")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorLookupAgg<true>, false)->Name("BM_EventsPool/FloorKeyed")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorHashAgg, true)->Name("BM_Events/FloorHash")->Unit(benchmark::kMillisecond);
BENCHMARK_TEMPLATE(BM_Events, FloorHashAgg, false)->Name("BM_EventsPool/FloorHash")->Unit(benchmark::kMillisecond);
AGG_BENCH("StdTwoLevel", StdTwoLevelAgg);
AGG_BENCH("AbslTwoLevel", AbslTwoLevelAgg);
AGG_BENCH("StdSingleKey", StdSingleKeyAgg);
AGG_BENCH("AbslSingleKey", AbslSingleKeyAgg);

}  // namespace

BENCHMARK_MAIN();
