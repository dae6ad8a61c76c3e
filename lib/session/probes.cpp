#include "session/probes.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string_view>

#include "feature_table/feature_table.hpp"
#include "kernel/features.hpp"
#include "probe/definition.hpp"
#include "syscalls/raw.hpp"
#include "util/strings.hpp"

namespace tracekit::session {

namespace {

Result<int> event_id(const std::string& tracing_dir, const std::string& system,
                     const std::string& event) {
  std::string path = tracing_dir + "/events/" + system + "/" + event + "/id";
  auto text = read_file(path);
  if (!text) return text.error();
  auto id = parse_int<int>(trim(*text));
  if (!id) return Error{0, "unreadable event id", path, {}};
  return *id;
}

}  // namespace

void say_detaching(const std::string& tool, size_t events) {
  if (events > kSlowPerfDetach)
    std::cerr << tool << ": detaching " << events
              << " probes (Ctrl-C again to leave the rest to the next run)..." << std::endl;
}

size_t Probes::size() const {
  size_t n = functions_.size();
  for (const auto& e : events_) n += e.syscalls.empty() ? 1 : e.syscalls.size();
  return n;
}

bool Probes::raw_syscalls() const {
  return std::any_of(events_.begin(), events_.end(),
                     [](const TraceEvent& e) { return !e.syscalls.empty(); });
}

Result<Probes> Probes::create(const std::string& tracing_dir,
                              const std::vector<probe::Target>& targets, bool function_tracer) {
  Probes p;
  std::optional<Error> first_error;
  auto group = [&]() -> Result<tracefs::ProbeGroup*> {
    if (!p.group_) {
      auto g = tracefs::ProbeGroup::open(tracing_dir);
      if (!g) return g.error();
      p.group_.emplace(std::move(*g));
    }
    return &*p.group_;
  };
  auto fail = [&](const probe::Target& t, const Error& e) {
    if (!first_error) first_error = e;
    std::string what = t.function.empty() ? t.system + ":" + t.event : t.function;
    p.skipped_.push_back(what + ": " + e.str());
  };
  // A probe just created (or its error): keep its event, with its id.
  auto keep = [&](const probe::Target& t, const std::string& system,
                  const Result<std::string>& ev) {
    if (!ev) return fail(t, ev.error());
    auto id = event_id(tracing_dir, system, *ev);
    if (!id) return fail(t, id.error());
    const bool tracepoint = t.kind == probe::Kind::kTracepoint || t.kind == probe::Kind::kEventProbe;
    p.events_.push_back({system, *ev, *id, {}, {}, tracepoint ? t.system + ":" + t.event : t.function});
  };

  // syscalls:* through raw_syscalls: the numbers of each side, and whether
  // the side's raw event is a target of its own.
  std::vector<int> raw_nrs[2];
  bool raw_target[2] = {false, false};
  const std::string raw_system(syscalls::kRawSystem);
  for (const auto& t : targets) {
    if (t.kind != probe::Kind::kTracepoint) continue;
    if (t.syscall_nr >= 0) {
      auto raw = syscalls::to_raw(t.event);
      if (raw)
        raw_nrs[raw->exit].push_back(t.syscall_nr);
      else
        fail(t, raw.error());
    } else if (t.system == raw_system) {
      for (bool exit : {false, true})
        if (t.event == syscalls::raw_event(exit)) raw_target[exit] = true;
    }
  }
  for (bool exit : {false, true}) {
    if (raw_nrs[exit].empty()) continue;
    const std::string event(syscalls::raw_event(exit));
    if (raw_target[exit]) {
      p.skipped_.push_back("syscalls:" + std::string(exit ? "sys_exit_*" : "sys_enter_*") + ": " +
                           raw_system + ":" + event +
                           " stands for them on this kernel, and is traced whole already");
      continue;
    }
    auto id = event_id(tracing_dir, raw_system, event);
    if (!id) {
      if (!first_error) first_error = id.error();
      p.skipped_.push_back(raw_system + ":" + event + ": " + id.error().str());
      continue;
    }
    TraceEvent e{raw_system, event, *id, raw_nrs[exit], {}, raw_system + ":" + event};
    std::sort(e.syscalls.begin(), e.syscalls.end());
    e.syscalls.erase(std::unique(e.syscalls.begin(), e.syscalls.end()), e.syscalls.end());
    e.filter = syscalls::id_filter(e.syscalls);
    p.events_.push_back(std::move(e));
  }

  std::map<std::string, std::string> shared;  // shared_event uprobes: "p:hint" -> event
  for (const auto& t : targets) {
    switch (t.kind) {
      case probe::Kind::kTracepoint: {
        if (t.syscall_nr >= 0) break;  // above
        auto id = event_id(tracing_dir, t.system, t.event);
        if (id)
          p.events_.push_back({t.system, t.event, *id, {}, {}, t.system + ":" + t.event});
        else
          fail(t, id.error());
        break;
      }
      case probe::Kind::kKernel:
      case probe::Kind::kKernelReturn: {
        auto g = group();
        if (!g) return g.error();
        bool ret = t.kind == probe::Kind::kKernelReturn;
        // TRACEKIT_KERNEL_FEATURES=-kprobes: as on a kernel without them
        // (kernel functions go to the function tracer), for tests of that
        // path on kernels that have both.
        const bool forced = kernel::forced_off(kernel::Feature::kKprobes);
        if (!(*g)->kprobes_supported() || forced) {
          if (function_tracer && !ret) {
            p.functions_.push_back(t.function);
            break;
          }
          Error e = kernel::missing_error(kernel::Feature::kKprobes, forced);
          e.hint += ret ? "; function returns need kretprobes"
                        : "; this tool cannot fall back to the function tracer";
          return e;
        }
        // Older kernels: $argN and ustring in the forms they take.
        auto& features = kernel::Features::host();
        auto args = probe::adapt_fetchargs(t.fetchargs, features.has(kernel::Feature::kKprobeArgN),
                                           features.has(kernel::Feature::kUstring));
        if (!args) return args.error();
        keep(t, (*g)->name(), (*g)->add_kprobe(t.function, ret, *args, t.event_name));
        break;
      }
      case probe::Kind::kUser:
      case probe::Kind::kUserReturn: {
        auto g = group();
        if (!g) return g.error();
        auto args = probe::adapt_fetchargs(
            t.fetchargs, true, kernel::Features::host().has(kernel::Feature::kUstring));
        if (!args) return args.error();
        const bool ret = t.kind == probe::Kind::kUserReturn;
        // A shared event made already: this probe is appended to it, or,
        // refused, gets its own.
        const std::string share_key = (ret ? "r:" : "p:") + t.event_name;
        if (t.shared_event) {
          auto it = shared.find(share_key);
          if (it != shared.end() && (*g)->append_uprobe(it->second, t.path, t.offset, ret, *args))
            break;
        }
        auto ev = (*g)->add_uprobe(t.path, t.offset, ret,
                                   t.event_name.empty() ? t.function : t.event_name, *args);
        if (ev && t.shared_event) shared.emplace(share_key, *ev);
        if (ev) p.uprobes_ = true;
        keep(t, (*g)->name(), ev);
        break;
      }
      case probe::Kind::kEventProbe: {
        auto g = group();
        if (!g) return g.error();
        keep(t, (*g)->name(), (*g)->add_eprobe(t.system, t.event, t.event_name, t.fetchargs));
        break;
      }
      case probe::Kind::kUsdt:
        return Error{0, "USDT probes (u:) are not supported yet", {},
                     "probe the function instead (lib:func)"};
    }
  }
  if (p.size() == 0 && first_error) return *first_error;
  return p;
}

}  // namespace tracekit::session
