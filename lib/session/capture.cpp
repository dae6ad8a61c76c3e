#include "session/capture.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

#include "kernel/features.hpp"
#include "perf/process_events.hpp"
#include "perf/stack_sampler.hpp"
#include "symbols/kallsyms.hpp"
#include "syscalls/raw.hpp"
#include "tracefs/filter.hpp"
#include "util/proc.hpp"

namespace tracekit::session {

namespace {

// "f" with " if " prefix for triggers, or "".
std::string tid_filter(const std::vector<int>& tids) {
  if (tids.empty() || tids.size() > kMaxFilterThreads) return "";
  return tracefs::equals_any("common_pid", tids);
}

std::string cpu_mask(int cpu) {
  // tracing_cpumask: hex, 32-bit groups separated by commas, low group last.
  std::string mask;
  int groups = cpu / 32 + 1;
  for (int g = groups - 1; g >= 0; --g) {
    uint32_t bits = (cpu / 32 == g) ? (1u << (cpu % 32)) : 0;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", bits);
    if (!mask.empty()) mask += ",";
    mask += buf;
  }
  return mask;
}

// The per-CPU ring owner for per-thread events (-p): a software event that
// never writes a record (PERF_COUNT_SW_DUMMY, Linux 3.12), so that the rings
// belong to no thread that may exit. Its attr decides the ring's wakeup
// watermark; the clock must be the writers' (the kernel refuses to mix
// clocks in a ring).
perf_event_attr ring_owner(const perf_event_attr& like, bool dummy) {
  perf_event_attr a{};
  a.type = PERF_TYPE_SOFTWARE;
  if (dummy) {
    a.config = PERF_COUNT_SW_DUMMY;
  } else {
    // Before 3.12: a CPU clock whose first sample would come in 146 years.
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 1ull << 62;
  }
  a.sample_type = like.sample_type;
  // (--call-graph dwarf: the kernel checks these whenever sample_type asks.)
  a.sample_regs_user = like.sample_regs_user;
  a.sample_stack_user = like.sample_stack_user;
  a.sample_id_all = like.sample_id_all;
  a.disabled = 1;
  a.watermark = like.watermark;
  a.wakeup_watermark = like.wakeup_watermark;
  a.use_clockid = like.use_clockid;
  a.clockid = like.clockid;
  return a;
}

}  // namespace

bool can_follow_forks(const std::function<bool(const std::string& rel)>& has, bool functions) {
  if (!has("set_event_pid") || !has("options/event-fork")) return false;
  return !functions || (has("set_ftrace_pid") && has("options/function-fork"));
}

Result<FtraceCapture> FtraceCapture::start(const std::string& tracing_dir, const Probes& probes,
                                           const CaptureOptions& o) {
  std::vector<int> threads;
  if (o.pid) {
    threads = threads_of(*o.pid);
    if (threads.empty()) return no_process_error(*o.pid);
  }
  if (o.tid && !process_exists(*o.tid))
    return Error{ESRCH, "no thread with TID " + std::to_string(*o.tid), {}, "check the TID with ps -L"};
  FtraceCapture c;
  auto& features = kernel::Features::host();
  const bool functions = !probes.functions().empty();
  // Stacks by the stacktrace option rather than by triggers (below).
  const bool wants_stack_option =
      o.stacks && (o.stack_option || probes.events().size() > kMaxTriggerEvents ||
                   !features.has(kernel::Feature::kStacktraceTrigger));
  // Kernels without instances: the top level, under perf-tools' lock. So
  // too where an instance has no trace options of its own (before Linux
  // 4.4) and the run needs one: the top level's options are then every
  // buffer's, and its tracer the only one. And for uprobes there: before
  // Linux 3.14 they write to the top level's buffer whichever instance
  // enabled them (3.10.108: 5 events at the top level, 0 in the
  // instance); no file tells, so every kernel whose instances have no
  // options (3.10 to 4.3) traces them at the top level.
  const bool needs_options = wants_stack_option || o.user_stacks || functions || probes.uprobes();
  bool private_instance =
      features.has(kernel::Feature::kInstances) &&
      (!needs_options || features.has(kernel::Feature::kInstanceOptions));
  auto inst = private_instance ? tracefs::Instance::create(tracing_dir)
                               : tracefs::Instance::top_level(tracing_dir);
  if (!inst) return inst.error();
  c.instance_.emplace(std::move(*inst));
  // The function tracer for one process needs a pid list of the
  // instance's own: 4.4's instances have a tracer but no set_ftrace_pid.
  if (private_instance && functions && o.pid && !c.instance_->has("set_ftrace_pid")) {
    c.instance_.reset();
    auto top = tracefs::Instance::top_level(tracing_dir);
    if (!top) return top.error();
    c.instance_.emplace(std::move(*top));
    private_instance = false;
  }
  tracefs::Instance& in = *c.instance_;
  // A full buffer keeps what it has and refuses (and counts) new events: the
  // oldest events are the ones a reader is about to read. An instance
  // without options of its own (before Linux 4.4) overwrites as the top
  // level did when it was made: the reader counts those overruns as lost.
  if (!private_instance || features.has(kernel::Feature::kInstanceOptions))
    if (auto st = in.set_option("overwrite", false); !st) return st.error();
  if (o.buffer_kb)
    if (auto st = in.set_buffer_size_kb(o.buffer_kb); !st) return st.error();
  if (o.cpu)
    if (auto st = in.set("tracing_cpumask", cpu_mask(*o.cpu)); !st) return st.error();

  // The formats to load: the events enabled, one by one (a whole system
  // can be hundreds of formats); the function tracer's are in "ftrace".
  std::vector<std::string> systems;
  if (o.event_formats)
    for (const auto& e : probes.events()) systems.push_back(e.system + "/" + e.event);
  std::string filter;  // common_pid filter, when forks cannot be followed
  if (o.pid) {
    // The files, unless TRACEKIT_KERNEL_FEATURES turns them off.
    c.follows_ = can_follow_forks(
        [&](const std::string& rel) {
          if (rel == "set_event_pid" && kernel::forced_off(kernel::Feature::kSetEventPid))
            return false;
          if (rel == "options/event-fork" && kernel::forced_off(kernel::Feature::kEventFork))
            return false;
          return in.has(rel);
        },
        functions);
    if (c.follows_ && !o.children) {
      auto fmt = tracefs::EventFormat::load(tracing_dir, "task", "task_newtask");
      if (fmt) {
        c.newtask_pid_ = fmt->field("pid");
        c.newtask_flags_ = fmt->field("clone_flags");
        c.newtask_.emplace(std::move(*fmt));
      }
      c.follows_ = c.newtask_pid_ && c.newtask_flags_;
    }
    if (c.follows_) {
      // The fork options first: the kernel follows forks from then on, so
      // a thread created after a listing is added with its parent.
      using List = tracefs::Instance::PidList;
      std::vector<List> lists{List::kEvents};
      if (auto st = in.set_option("event-fork", true); !st) return st.error();
      if (functions) {
        if (auto st = in.set_option("function-fork", true); !st) return st.error();
        lists.push_back(List::kFunctions);
      }
      if (auto st = in.set_event_pid(threads); !st) return st.error();
      if (functions)
        if (auto st = in.set_ftrace_pid(threads); !st) return st.error();
      // Threads created between the listing and the write have a parent on
      // the list too late: list again until nothing is new. Nothing is
      // traced yet, so nothing they did is missed.
      std::set<int> listed(threads.begin(), threads.end());
      for (int round = 0; round < perf::kMaxFollowRounds; ++round) {
        std::vector<int> fresh;
        for (int t : threads_of(*o.pid))
          if (listed.insert(t).second) fresh.push_back(t);
        if (fresh.empty()) break;
        for (List l : lists)
          if (auto st = in.add_pids(l, fresh); !st) return st.error();
        threads.insert(threads.end(), fresh.begin(), fresh.end());
      }
      if (!o.children) {
        if (auto st = in.enable_event("task", "task_newtask"); !st) return st.error();
        if (std::find(systems.begin(), systems.end(), "task/task_newtask") == systems.end())
          systems.push_back("task/task_newtask");
        c.newtask_is_probe_ =
            std::any_of(probes.events().begin(), probes.events().end(),
                        [&](const TraceEvent& e) { return e.id == c.newtask_->id(); });
      }
    } else {
      filter = tid_filter(threads);
    }
    // Also when the kernel filters: events of other tasks still come.
    // sched_switch is kept when next is on the list (its common_pid is
    // prev); kernels before 5.17 reserve kprobe and uprobe records without
    // trace_event_buffer_reserve(), which is where the pid list is checked
    // for events with a trigger (trace_trigger_soft_disabled() leaves it to
    // the reserve when a trigger needs the record, as a post-call stacktrace
    // does); and with more than kMaxFilterThreads threads the fallback sets
    // no kernel filter at all.
    // With children, the kernel's pid list (or filter) is the whole filter.
    if (!o.children)
      c.filter_.emplace(ThreadGroup(*o.pid, threads), [](int tid) { return tgid_of(tid); });
  }

  if (o.tid) filter = "common_pid == " + std::to_string(*o.tid);
  filter = tracefs::join_filters(filter, o.filter);
  // Kernels before 3.14 have no stacktrace trigger: the instance's
  // stacktrace option then gives every event a stack (filters still gate
  // them: a filtered-out event is not written, nor is its stack).
  // Many events take it too: the kernel synchronises once per trigger it
  // removes (trigger_data_free), 30 s for 360 syscall events here, against
  // under 0.1 s for disabling them and the option.
  const bool stack_option = wants_stack_option && in.has("options/stacktrace");
  if (stack_option)
    if (auto st = in.set_option("stacktrace", true); !st) return st.error();
  // What a refused event costs the drop counters (lost_events()): its
  // record, and its stack's when the kernel still tries to save that. A
  // trigger and the function tracer do; the stacktrace option does only
  // for an event with a filter, which the kernel writes to a per-CPU temp
  // buffer first and copies into the ring before saving the stack, refused
  // or not (measured: 2 records an event with raw_syscalls' id filter, 1
  // without a filter).
  // Kernels before the temp buffer (trace_buffered_event_enable, Linux
  // 4.5) write a filtered event straight into the ring: 1 record then
  // (measured on 4.4.121: 2926 drops for 2921 refused getppid events with
  // an id filter under the option; 4.19: 5843).
  bool filtered = !filter.empty() || !o.event_filters.empty();
  for (const auto& e : probes.events()) filtered = filtered || !e.filter.empty();
  if (o.stacks && stack_option && filtered && !functions &&
      !symbols::kernel_has_text_symbol({"trace_buffered_event_enable"}, true))
    filtered = false;
  c.records_per_refused_ = o.stacks && (!stack_option || functions || filtered) ? 2 : 1;
  if (o.user_stacks) {
    if (!in.has("options/userstacktrace"))
      return Error{ENOENT, "this kernel's tracefs cannot record user stacks",
                   in.path() + "/options/userstacktrace", {}};
    if (auto st = in.set_option("userstacktrace", true); !st) return st.error();
  }
  for (const auto& e : probes.events()) {
    // A raw_syscalls stand-in's id filter first: the event is the syscalls'.
    std::string f = tracefs::join_filters(e.filter, filter);
    if (auto it = o.event_filters.find(e.system + ":" + e.event); it != o.event_filters.end())
      f = tracefs::join_filters(f, it->second);
    if (!f.empty())
      if (auto st = in.set_filter(e.system, e.event, f); !st) {
        Error err = st.error();
        if (!e.syscalls.empty() && !o.filter.empty()) err.hint = syscalls::filter_hint(e.event);
        return err;
      }
    // The trigger first, so that no event is recorded without its stack.
    // An event filter does not gate triggers: the trigger repeats it.
    if (o.stacks && !stack_option) {
      std::string trigger = f.empty() ? "stacktrace" : "stacktrace if " + f;
      if (auto st = in.add_trigger(e.system, e.event, trigger); !st) return st.error();
    }
    if (auto st = in.enable_event(e.system, e.event); !st) return st.error();
  }
  if (functions) {
    if (o.pid && !c.follows_)
      if (auto st = in.set_ftrace_pid(threads); !st) return st.error();
    if (auto st = in.start_function_tracer(probes.functions(), o.stacks); !st) return st.error();
  }
  // Opened last: the kernel refuses to change current_tracer while a
  // trace_pipe_raw is open (EBUSY). What was recorded meanwhile waits in the
  // buffer.
  auto reader = ftrace::Reader::open(tracing_dir, in.name(), systems,
                                     ftrace::StackKinds{o.stacks, o.user_stacks});
  if (!reader) return reader.error();
  c.reader_.emplace(std::move(*reader));
  c.reader_->set_time_ordered(o.time_ordered);
  return c;
}

uint64_t lost_events(uint64_t dropped, uint64_t stackless, int records_per_event) {
  const uint64_t per = records_per_event > 0 ? static_cast<uint64_t>(records_per_event) : 1;
  const uint64_t refused = dropped - std::min(stackless, dropped);  // whole events' records
  return (refused + per - 1) / per;
}

uint64_t FtraceCapture::lost_events() const {
  return session::lost_events(reader_->dropped(), reader_->unpaired(), records_per_refused_);
}

void FtraceCapture::route(const ftrace::Event& e, const ftrace::Reader::Callback& fn) {
  if (newtask_ && e.type == newtask_->id()) {
    auto child = newtask_->number(newtask_pid_, e.data);
    auto flags = newtask_->number(newtask_flags_, e.data);
    if (child && flags) filter_->group().new_task(e.pid, static_cast<int>(*child), *flags);
    if (!newtask_is_probe_) return;
  }
  filter_->push(e, fn);
}

size_t FtraceCapture::poll(int timeout_ms, const ftrace::Reader::Callback& fn,
                           const ftrace::Reader::Progress& progress) {
  if (!filter_) return reader_->poll(timeout_ms, fn, progress);
  size_t n = reader_->poll(timeout_ms, [&](const ftrace::Event& e) { route(e, fn); });
  filter_->end_of_pass(fn);
  if (progress) progress(UINT64_MAX);
  return n;
}

size_t FtraceCapture::flush(const ftrace::Reader::Callback& fn,
                            const ftrace::Reader::Progress& progress) {
  if (!filter_) return reader_->flush(fn, progress);
  size_t n = reader_->flush([&](const ftrace::Event& e) { route(e, fn); });
  filter_->finish(fn);
  if (progress) progress(UINT64_MAX);
  return n;
}

Result<PerfCapture> PerfCapture::start(const Probes& probes, const CaptureOptions& o,
                                       bool kernel_stacks, bool user_stacks) {
  if (!probes.functions().empty())
    return Error{0, "perf cannot read function tracer events", {},
                 "kernel functions without kprobes need the ftrace backend (-K)"};
  if (probes.events().empty()) return Error{0, "nothing to trace", {}, {}};
  std::vector<int> cpus;
  if (o.cpu) {
    cpus = {*o.cpu};
  } else {
    auto online = perf::online_cpus();
    if (!online) return online.error();
    cpus = *online;
  }
  const size_t pages = perf::ring_pages(cpus.size());
  std::vector<perf_event_attr> attrs;
  // Each event's filter, set once at open: a perf tracepoint event takes one
  // filter for its life (ftrace_profile_set_filter() refuses a second).
  std::vector<std::string> filters;
  for (const auto& e : probes.events()) {
    filters.push_back(tracefs::join_filters(e.filter, o.filter));
    if (auto it = o.event_filters.find(e.system + ":" + e.event); it != o.event_filters.end())
      filters.back() = tracefs::join_filters(filters.back(), it->second);
    perf_event_attr a{};
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = static_cast<uint64_t>(e.id);
    a.sample_period = 1;
    a.sample_type = kSampleType;
    a.disabled = 1;
    if (auto st = perf::request_stacks(a, kernel_stacks, user_stacks, o.call_graph); !st)
      return st.error();
    if (user_stacks && !o.call_graph.dwarf() && o.entry_callers)
      if (auto st = perf::request_stack_top(a); !st) return st.error();
    if (o.regs_abi)
      if (auto st = perf::request_regs_abi(a); !st) return st.error();
    perf::wake_at_quarter(a, pages);
    a.sample_id_all = 1;
    if (o.pid) {
      a.inherit = 1;
      a.sample_type |= PERF_SAMPLE_ID;  // for FollowedThreads::duplicate
    }
    // Side-band records (names, mappings of short-lived processes) from the
    // first event only: every event sharing a ring would repeat them. With
    // -p they come from the process's own (inherited) events.
    if (attrs.empty()) perf::request_process_events(a);
    attrs.push_back(a);
  }
  PerfCapture c;
  c.attr_ = attrs.front();
  if (o.pid) {
    auto ev = perf::PerCpuEvents::open(ring_owner(attrs.front(), true), cpus, -1, pages);
    if (!ev &&
        (ev.error().err == EINVAL || ev.error().err == ENOENT || ev.error().err == EOPNOTSUPP))
      ev = perf::PerCpuEvents::open(ring_owner(attrs.front(), false), cpus, -1, pages);
    if (!ev) return ev.error();
    c.events_.emplace(std::move(*ev));
    auto followed = perf::follow_process(*c.events_, attrs, *o.pid, filters);
    if (!followed) return followed.error();
    c.followed_ = std::move(*followed);
    return c;
  }
  auto ev = perf::PerCpuEvents::open(attrs.front(), cpus, -1, pages, filters.front());
  if (!ev) return ev.error();
  c.events_.emplace(std::move(*ev));
  for (size_t i = 1; i < attrs.size(); ++i)
    if (auto st = c.events_->add(attrs[i], -1, nullptr, filters[i]); !st) return st.error();
  return c;
}

}  // namespace tracekit::session
