#include "stacks/capture.hpp"

#include <algorithm>
#include <cstdio>

#include "perf/process_events.hpp"
#include "util/proc.hpp"

namespace tracekit::stacks {

namespace {

// "f" with " if " prefix for triggers, or "".
std::string tid_filter(const std::vector<int>& tids) {
  if (tids.empty() || tids.size() > kMaxFilterThreads) return "";
  return thread_filter("common_pid", tids);
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

}  // namespace

Result<FtraceCapture> FtraceCapture::start(const std::string& tracing_dir, const Probes& probes,
                                           const CaptureOptions& o) {
  FtraceCapture c;
  auto inst = tracefs::Instance::create(tracing_dir);
  if (!inst) return inst.error();
  c.instance_.emplace(std::move(*inst));
  tracefs::Instance& in = *c.instance_;
  // A full buffer keeps what it has and refuses (and counts) new events: the
  // oldest events are the ones a reader is about to read.
  if (auto st = in.set_option("overwrite", false); !st) return st.error();
  if (o.buffer_kb)
    if (auto st = in.set_buffer_size_kb(o.buffer_kb); !st) return st.error();
  if (o.cpu)
    if (auto st = in.write("tracing_cpumask", cpu_mask(*o.cpu)); !st) return st.error();

  const std::string filter = tid_filter(o.tids);
  for (const auto& e : probes.events()) {
    if (!filter.empty())
      if (auto st = in.set_filter(e.system, e.event, filter); !st) return st.error();
    // The trigger first, so that no event is recorded without its stack.
    if (o.stacks) {
      std::string trigger = filter.empty() ? "stacktrace" : "stacktrace if " + filter;
      if (auto st = in.add_trigger(e.system, e.event, trigger); !st) return st.error();
    }
    if (auto st = in.enable_event(e.system, e.event); !st) return st.error();
  }
  if (!probes.functions().empty()) {
    if (!o.tids.empty()) {
      std::string pids;
      for (int t : o.tids) pids += std::to_string(t) + " ";
      if (auto st = in.write("set_ftrace_pid", pids); !st) return st.error();
    }
    if (auto st = in.start_function_tracer(probes.functions(), o.stacks); !st) return st.error();
  }
  // Opened last: the kernel refuses to change current_tracer while a
  // trace_pipe_raw is open (EBUSY). What was recorded meanwhile waits in the
  // buffer.
  auto reader = ftrace::Reader::open(tracing_dir, in.name(), probes.systems(), o.stacks);
  if (!reader) return reader.error();
  c.reader_.emplace(std::move(*reader));
  return c;
}

Result<PerfCapture> PerfCapture::start(const Probes& probes, const CaptureOptions& o,
                                       bool kernel_stacks, bool user_stacks) {
  if (!probes.functions().empty())
    return Error{0, "perf cannot read function tracer events", {},
                 "kernel functions without kprobes need the ftrace backend (-K)"};
  std::vector<int> cpus;
  if (o.cpu) {
    cpus = {*o.cpu};
  } else {
    auto online = perf::online_cpus();
    if (!online) return online.error();
    cpus = *online;
  }
  PerfCapture c;
  bool first = true;
  for (const auto& e : probes.events()) {
    perf_event_attr a{};
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = static_cast<uint64_t>(e.id);
    a.sample_period = 1;
    a.sample_type = kSampleType;
    a.disabled = 1;
    a.exclude_callchain_kernel = !kernel_stacks;
    a.exclude_callchain_user = !user_stacks;
    a.sample_max_stack = static_cast<uint16_t>(std::min(perf::max_stack(), 127));
    a.watermark = 1;
    a.wakeup_watermark = 256 * 4096 / 4;
    a.sample_id_all = 1;
    if (first) {
      // Side-band records (names, mappings of short-lived processes) from
      // the first event only: every event sharing a ring would repeat them.
      perf::request_process_events(a);
      c.attr_ = a;
      auto ev = perf::PerCpuEvents::open(a, cpus, -1, 256);
      if (!ev) return ev.error();
      c.events_.emplace(std::move(*ev));
      first = false;
    } else if (auto st = c.events_->add(a); !st) {
      return st.error();
    }
  }
  if (!c.events_) return Error{0, "nothing to trace", {}, {}};
  const std::string filter = tid_filter(o.tids);
  if (!filter.empty())
    if (auto st = c.events_->set_filter(filter); !st) return st.error();
  return c;
}

}  // namespace tracekit::stacks
