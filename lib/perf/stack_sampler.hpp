// The perf stack sampler: what every tool that samples stacks with
// perf_event_open shares (profile: cpu-clock; offcputime: sched_switch;
// stackcount's perf backend: probe events).
//
//  - the rings: one per CPU, sized by ring_pages(), the reader woken at a
//    quarter of each (wake_at_quarter());
//  - the stacks asked of the kernel (request_stacks()): callchains of the
//    sides kept, the user side by frame pointers or (--call-graph dwarf) as
//    the user registers and stack, unwound here (UserUnwinder);
//  - the process records (COMM, FORK, EXIT, MMAP2: ProcessEvents), which
//    name the tasks (TaskNames) and keep every process's mappings
//    (symbols::UserSymbols), and the processes noted as their samples come,
//    once per run of samples of one process;
//  - kernel symbols, loading in the background from the start, and the
//    tracing machinery's frames stripped from stacks taken at trace events,
//    with records held in memory while the table loads (util/backlog.hpp);
//  - the full user registers of tasks in a system call (perf/
//    syscall_regs.hpp);
//  - the warnings at the end of a report: events lost, stacks cut at the
//    kernel's depth or the dwarf copy's size, records not decoded, and the
//    hint that user stacks look truncated.
//
// What is the tool's stays the tool's: which events (attr), what a sample
// means and how it is counted. A tool prepares its attr (prepare()), opens
// it with open() (or hands over events another owner opened: stackcount's
// session::PerfCapture), enables (enable()), and drains: samples come to
// it decoded, side-band records it does not know (LOST, SWITCH_CPU_WIDE)
// come as they are. For each sample it keeps, stacks() gives its kernel
// and user stacks.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "perf/per_cpu.hpp"
#include "perf/sample.hpp"
#include "perf/task_names.hpp"
#include "symbols/user.hpp"
#include "util/result.hpp"

namespace tracekit::perf {

// Data pages of each CPU's ring for cpus CPUs (a power of two, as perf
// wants). Events of no known rate (trace events): 8 MiB each while all of
// them stay within 32 MiB, halved as CPUs are added, down to 1 MiB on 32
// CPUs or more. A ring holds what its CPU writes while the reader is kept
// off its CPU: sched_switch at a hundred thousand switches a second, each
// record carrying up to 127 frames (about 300 bytes at 20), filled a 2 MiB
// ring in 3 of 17 runs of perf bench sched pipe on a loaded 2-CPU VM, an 8
// MiB one in none of 6; a thread in a loop of system calls makes 0.6 M
// samples of about 200 bytes a second, 8 MiB hold 60 ms of them. Events of
// a known rate (bytes_per_second per CPU, at most: profile's timer) get a
// second of it, at least 512 KiB, at most the above: mapping costs about
// 0.8 ms per 8 MiB ring here (2 CPUs: 3.3 ms for 8 MiB rings, 1.4 ms for
// 4 MiB, 0.2 ms for 512 KiB), which a 49 Hz profile need not pay. Pure.
size_t ring_pages(size_t cpus, uint64_t bytes_per_second = 0);
// The most bytes a sample of attr takes in a ring: its fixed fields, a
// whole callchain, the user registers and stack it asks for. Pure.
uint64_t max_sample_bytes(const perf_event_attr& attr);
// Wakes the reader when a quarter of a ring of ring_pages is used (the
// poll() timeouts drain the rest, so low rates are still read promptly).
void wake_at_quarter(perf_event_attr& attr, size_t ring_pages);

// Asks attr for the stacks of the sides kept: callchains of the kernel side
// and (frame pointers) the user side, or with cg.dwarf() the user registers
// and stack the user side is unwound from. Error: as request_user_stack().
Status request_stacks(perf_event_attr& attr, bool kernel, bool user, const CallGraph& cg);

// "WARNING: N events lost: the kernel buffer was full (HINT).\n", without
// the parenthesis when hint is empty: the one wording of lost events
// (session::report_lost's). Pure.
std::string lost_events_warning(uint64_t lost, std::string_view hint = {});

struct SamplerOptions {
  bool kernel = true;  // kernel stacks kept
  bool user = true;    // user stacks kept
  CallGraph call_graph;  // how user stacks are taken
  // The samples are taken at trace events: their kernel stacks start with
  // the tracing machinery's frames (symbols/tracing_frames.hpp), stripped
  // as the samples come. Records are then held in memory while the kernel
  // symbols load, rather than left in the rings to fill them.
  bool strip_tracing = false;
  // With user stacks: hold perf::full_syscall_regs for the run. Finding
  // out whether this kernel needs it reads /proc/kallsyms up to _etext
  // (40-90 ms here): a tool whose samples are never taken in a fast-path
  // system call can do without.
  bool syscall_regs = true;
  // The lost-events warning's hint (lost_events_warning()).
  std::string lost_hint;
  // Samples a second per CPU, at most, when the events' rate is known
  // (profile's timer); 0: unbounded (trace events). Sizes the rings.
  uint64_t rate = 0;
};

// A sample's stacks: each side kept, leaf first; nullopt for a side not
// kept.
struct SampleStacks {
  std::optional<std::span<const uint64_t>> kernel, user;
};

class StackSampler {
 public:
  // Sets what o needs in attr: request_stacks() of its sides, the process
  // records (request_process_events()), and the wakeup of rings of
  // ring_pages() for cpus CPUs and o.rate samples of attr a second. attr's sample_type is then what samples decode with
  // (a tool adding bits adds them before open()).
  static Status prepare(perf_event_attr& attr, const SamplerOptions& o, size_t cpus);
  // Opens attr (as prepare() left it, and the tool's own additions) on
  // cpus, pid -1, with rings as prepare() sized them, disabled when
  // attr.disabled is set. Error: the first CPU that failed.
  static Result<StackSampler> open(const perf_event_attr& attr, const std::vector<int>& cpus,
                                   SamplerOptions o);
  // Over events opened elsewhere (which must outlive this): attr is the
  // event's that asks the process records, with the sample_type every
  // event sharing the rings has.
  StackSampler(PerCpuEvents& events, const perf_event_attr& attr, SamplerOptions o);

  StackSampler(StackSampler&&) noexcept;
  StackSampler& operator=(StackSampler&&) noexcept;
  ~StackSampler();

  PerCpuEvents& events() { return *events_; }
  const perf_event_attr& attr() const { return attr_; }
  TaskNames& names();
  symbols::UserSymbols& user_symbols();

  // Enables the events. Tasks that existed before get no COMM or MMAP2
  // records: with name_tasks, their names are read now (pids' threads, or
  // every thread when pids is empty), and with user stacks pids' mappings,
  // while they live, for their samples may be read after they exit.
  Status enable(const std::vector<int>& pids, bool name_tasks);

  // Drains the rings (at most max_per_ring records from each, none once
  // stop() is true): on_sample(int cpu, const Sample&) for each sample,
  // on_other(int cpu, const perf_event_header&, std::span<const uint8_t>)
  // for the records the process records are not (LOST, SWITCH_CPU_WIDE,
  // ...). Records held while the kernel symbols load are handed out, in
  // the order they came, once they are loaded.
  template <class OnSample, class OnOther, class Stop = NeverStop>
  size_t drain(OnSample&& on_sample, OnOther&& on_other, size_t max_per_ring = SIZE_MAX,
               Stop&& stop = Stop{}) {
    auto each = dispatch(on_sample, on_other);
    size_t n = events_->drain(
        [&](int cpu, const perf_event_header& h, std::span<const uint8_t> rec) {
          if (waiting_ && held(cpu, rec, each)) return;
          each(cpu, h, rec);
        },
        max_per_ring, stop);
    if (waiting_ && symbols_loaded()) replay(each);
    return n;
  }
  // Everything left: the rings, then the records held (waiting for the
  // kernel symbols). After the events are disabled.
  template <class OnSample, class OnOther>
  void finish(OnSample&& on_sample, OnOther&& on_other) {
    drain(on_sample, on_other);
    if (waiting_) replay(dispatch(on_sample, on_other));
  }
  // Whether records are held, waiting for the kernel symbols: what the
  // tool has seen is not all that came.
  bool holding() const;

  // A sample's callchain split, noted if the kernel cut it, its kernel
  // side stripped of tracing frames (strip_tracing). The tool may change
  // the user side before stacks() (stackcount: the entry caller).
  Chains chains(const Sample& s);
  // The sides kept of s: the user side unwound (dwarf) or as c has it (its
  // shortness noted for the hint), and s's process noted in the user
  // symbols when its user side is not empty.
  SampleStacks stacks(const Sample& s, const Chains& c);
  SampleStacks stacks(const Sample& s) { return stacks(s, chains(s)); }

  // One more record the tool could not decode (its own fields).
  void undecodable() { ++undecodable_; }
  // Records lost by events the tool opened into the rings and closed
  // (PerCpuEvents::own_lost()).
  void lost_elsewhere(uint64_t n) { lost_elsewhere_ += n; }
  // Events lost since the last warn().
  uint64_t lost() const;
  // Stacks cut since the last warn(): at the kernel's depth, or at the
  // dwarf stack copy's size.
  uint64_t truncated() const;

  // Before a report: why user stacks of tasks in a system call may be
  // wrong, when the kernel would not give their full registers (once).
  void warn_before(std::ostream& err);
  // After a report: events lost (lost_events_warning() with o.lost_hint),
  // stacks cut, records not decoded, and the hint that user stacks look
  // truncated (once per run). The counts start again from zero.
  void warn(std::ostream& err);

 private:
  struct Parts;
  using Each = std::function<void(int, const perf_event_header&, std::span<const uint8_t>)>;
  StackSampler(std::unique_ptr<Parts> parts, const perf_event_attr& attr);

  // What a drain does with each record it hands out.
  template <class OnSample, class OnOther>
  auto dispatch(OnSample& on_sample, OnOther& on_other) {
    return [this, &on_sample, &on_other](int cpu, const perf_event_header& h,
                                         std::span<const uint8_t> rec) {
      if (h.type != PERF_RECORD_SAMPLE) {
        if (!side_band(h, rec)) on_other(cpu, h, rec);
        return;
      }
      Sample s;
      if (decode(rec, s)) on_sample(cpu, s);
    };
  }

  // Side-band records the process records take; false for the others.
  bool side_band(const perf_event_header& h, std::span<const uint8_t> rec);
  // decode_sample with attr_'s layout; counts a failure.
  bool decode(std::span<const uint8_t> rec, Sample& s);
  bool symbols_loaded() const;
  // Holds rec while the kernel symbols load; else hands out what is held
  // (through each) and returns false.
  template <class Fn>
  bool held(int cpu, std::span<const uint8_t> rec, Fn& each) {
    if (hold(cpu, rec)) return true;
    replay(each);
    return false;
  }
  bool hold(int cpu, std::span<const uint8_t> rec);
  void replay(const Each& each);

  std::unique_ptr<Parts> p_;
  PerCpuEvents* events_ = nullptr;  // p_'s, or the caller's
  perf_event_attr attr_{};
  bool waiting_ = false;  // records may be held for the kernel symbols
  int64_t noted_pid_ = -1;  // the process of the last note_process()
  uint64_t undecodable_ = 0;
  uint64_t lost_elsewhere_ = 0, lost_reported_ = 0;
};

}  // namespace tracekit::perf
